/* SPDX-License-Identifier: MIT */
/* The scenetest command: `run`, `list` and `check` (SPEC §6). It parses the
 * command line, loads the scenes, selects cases, wires the reporters to the
 * run as observers, and maps outcomes to the exit status: 0 all selected
 * cases passed or were skipped, 1 a case failed, 2 usage, load or
 * validation error (nothing ran), 3 internal error. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "case/args.h"
#include "case/result.h"
#include "cli/cli_internal.h"
#include "cli/merge.h"
#include "cli/shard_by.h"
#include "cli/cli_measure.h"
#include "cli/inputs.h"
#include "ops/validate.h"
#include "report/json.h"
#include "cli/bench.h"
#include "report/report.h"
#include "scene/scene.h"
#include "scene/suggest.h"
#include "tools/timelog.h"

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

enum { CMD_RUN = 1, CMD_LIST = 2, CMD_CHECK = 4 };
#define CMD_ALL (CMD_RUN | CMD_LIST | CMD_CHECK)
#define CMD_SELECT (CMD_RUN | CMD_LIST)

static const char usage_text[] =
    "usage: scenetest run [OPTIONS] PATH...    run scenes (files, or "
    "directories\n"
    "                                          searched for *.yaml / *.yml)\n"
    "       scenetest list [OPTIONS] PATH...   print the selected cases, one\n"
    "                                          \"scene::case\" a line\n"
    "       scenetest check [OPTIONS] PATH...  load and validate only\n"
    "       scenetest bench [OPTIONS] PATH...  time the kernels against this\n"
    "                                          machine's ceilings "
    "(docs/bench.md)\n"
    "       scenetest timing [OPTIONS] LOG...  summarise TIMING logs\n"
    "       scenetest compare [OPTIONS] BASE NEW  compare two sides' timings\n"
    "       scenetest merge [--report FORMAT:PATH]... [--format F] [--output "
    "PATH] INPUT...\n"
    "                                          shards' JSON or --events "
    "reports as one\n"
    "       scenetest --version | --help\n"
    "\n"
    "Selection (run, list):\n"
    "  --platform P          platform to run on (default cpu)\n"
    "  --case SEL            select cases: scene, scene::case, ::case; shell\n"
    "                        globs allowed; repeatable; a selector that\n"
    "                        selects nothing is an error\n"
    "  --manual MODE         exclude|include|only manual cases (default "
    "exclude)\n"
    "  --shard K/N           only shard K of N (0-based; run also reads\n"
    "                        GTEST_*, TEST_*, CI_NODE_*, CIRCLE_NODE_* and\n"
    "                        BUILDKITE_PARALLEL_JOB* shard variables)\n"
    "  --shard-by durations:FILE  split the shards by the case durations of\n"
    "                        an earlier JSON or --events report (longest\n"
    "                        first) instead of the name hash\n"
    "  --rerun-failed FILE   only the cases an --events, json, junit or tap\n"
    "                        report says failed\n"
    "  --require-cases       exit 2 when nothing is selected (default: exit "
    "0)\n"
    "  --tag EXPR            only cases whose tags satisfy EXPR (names, and,\n"
    "                        or, not, parentheses)\n"
    "  -k EXPR               the same grammar over case ids, each name a\n"
    "                        case-insensitive substring\n"
    "  --skip SEL            leave out the cases SEL selects (repeatable)\n"
    "  --lf, --last-failed   only the cases that failed in the last run\n"
    "  --ff, --failed-first  those cases first, then the rest\n"
    "  --cache-dir DIR       the last-failed state's directory (default\n"
    "                        .scenetest-cache)\n"
    "  --no-cache            neither read nor write the last-failed state\n"
    "\n"
    "Running (run):\n"
    "  --rounds N            rounds per case, N >= 1 (default: the case's, "
    "else 1)\n"
    "  --skip-golden         skip the golden computation and compare\n"
    "  --seed N              seed of the random inits (default 0)\n"
    "  -j, --jobs N          cases in parallel (default 1)\n"
    "  --golden-platform P   the backend that computes golden (default: the\n"
    "                        case's or scene's golden_platform, else\n"
    "                        reference); e.g. torch\n"
    "  --golden-threads N    threads of the reference backend\n"
    "                        (default min(8, cores))\n"
    "  --maxfail N           stop after N failed cases (the rest are\n"
    "                        reported as skipped)\n"
    "  -x, --fail-fast       --maxfail 1\n"
    "  --durations N         list the N slowest cases at the end\n"
    "  --isolate             run each case in a forked child\n"
    "  --no-supervise        run the cases in this process (for debuggers;\n"
    "                        a crashing kernel ends the run)\n"
    "  --timeout SECONDS     kill a case after SECONDS (level 2: isolated)\n"
    "  --guard-pages         end every tensor at a PROT_NONE page: a kernel\n"
    "                        touching past the end is its case's error\n"
    "  --strict-record       a stale autoload record is an error\n"
    "  --strict-mistrust     a mistrusted case that passes fails\n"
    "  --determinism N       run each case N times; outputs must not change\n"
    "  --watch NAME=GLOB,... watch more modules in the autoload record\n"
    "  --repeat N            run the selection N times (cases named S::C@k)\n"
    "  --shuffle             shuffle each iteration (the seed is printed)\n"
    "  --shuffle-seed S      the shuffle seed (implies --shuffle)\n"
    "\n"
    "Output (run):\n"
    "  --format F            text|tap|junit|json|html (default: text on a "
    "terminal,\n"
    "                        else tap); list: text|json\n"
    "  --output FILE         write the report to FILE instead of stdout\n"
    "  --events FILE         write every case's events to FILE as JSON Lines\n"
    "  --report FMT:PATH     also write a tap, junit, json or html report to\n"
    "                        PATH\n"
    "                        (repeatable; GTEST_OUTPUT, XML_OUTPUT_FILE too)\n"
    "  --junit-family F      xunit2 (default) or xunit1 (testcase file, line)\n"
    "  --log-file FILE       the whole log to FILE; stderr keeps warnings and\n"
    "                        errors\n"
    "  --dump-on-fail DIR    write a failing compare's tensors as .npy files\n"
    "                        under DIR/SCENE/CASE/\n"
    "  --color WHEN          auto (default: a terminal, no NO_COLOR, TERM not\n"
    "                        dumb), always or never\n"
    "  -v, --verbose         text: also each passing case's phase times and\n"
    "                        output\n"
    "  -q, --quiet           text: only failures and the summary\n"
    "\n"
    "Bench (bench; also every run option, -j forced to 1):\n"
    "  --warmup-ms N         warm-up time before the timed rounds (25)\n"
    "  --min-time-ms N       timed loop at least N ms (100)\n"
    "  --max-time-ms N       ... at most N ms (10000)\n"
    "  --min-rounds N        at least N timed rounds (10)\n"
    "  --max-rounds N        at most N timed rounds (1000)\n"
    "  --cold-cache          flush the cache before each timed round\n"
    "  --no-check            skip golden and compare\n"
    "  --allow-suspicious    a figure above 105% of its ceiling does not fail\n"
    "  --format F            text|csv|json (default text)\n"
    "  --report html:PATH    also an HTML page with a roofline chart\n"
    "\n"
    "Loading (run, list, check):\n"
    "  --max-arg-bytes N     cap on one case's tensor bytes (default 2G);\n"
    "                        N may end in K, M, G or T (powers of 1024)\n"
    "  --max-nodes N         budget of alias-expanded YAML nodes per file\n"
    "                        (default 1000000; plain nodes do not count)\n"
    "  --max-file-bytes N    cap on a scene file's size (default 1G); N may\n"
    "                        end in K, M, G or T\n"
    "  --plugin [lazy:]PATH  load a backend plugin (lazy: on first use)\n"
    "  --strict-platforms    an unknown platform in a scene is an error (as\n"
    "                        in check), not a warning\n"
    "  --ignore GLOB         skip matching paths in directory scans\n"
    "                        (repeatable; also .scenetestignore)\n"
    "  --no-default-plugins  do not declare the installed plugins (those in\n"
    "                        $libdir/scenetest/plugins and\n"
    "                        SCENETEST_PLUGIN_PATH)\n"
    "\n"
    "General:\n"
    "  --log-level LEVEL     debug|info|timing|warning|error|null (default "
    "timing,\n"
    "                        or $SCENETEST_LOG_LEVEL)\n"
    "  --config FILE         the configuration file (default: the first\n"
    "                        scenetest.yaml upwards, stopping at .git)\n"
    "  --no-config           read no configuration file\n"
    "  --show-config         print the merged settings and their sources\n"
    "  --version             print the version and exit\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Exit status: 0 all selected cases passed or were skipped; 1 a case "
    "failed;\n"
    "2 usage, load or validation error (nothing ran); 3 internal error.\n"
    "Options may come before or after the paths; \"--\" ends the options.\n";

static int internal_error(const char *what, st_status rc) {
  fprintf(stderr, "scenetest: error: internal error: %s: %s\n", what,
          st_status_str(rc));
  return EXIT_INTERNAL;
}

/* An st_error of the library: ST_EUSAGE and input errors are the user's
 * (exit 2), the rest internal (exit 3). */
static int report_error(const st_error *err, st_status rc) {
  char buf[ST_ERROR_FILE_MAX + ST_ERROR_MESSAGE_MAX + 64];
  const char *msg = err->message[0] != '\0' ? err->message : st_status_str(rc);

  if (err->file[0] != '\0') {
    fprintf(stderr, "%s\n", st_error_format(err, buf, sizeof buf));
    return EXIT_USAGE;
  }
  if (rc == ST_ENOMEM || rc == ST_EINTERNAL || rc == ST_EIO) {
    fprintf(stderr, "scenetest: error: internal error: %s\n", msg);
    return EXIT_INTERNAL;
  }
  return st__cli_usage("%s", msg);
}

/* Parses a decimal integer in [min, max]: digits only (strtoull would
 * accept a sign and wrap "-1" to UINT64_MAX). */
static int parse_uint(const char *opt, const char *text, uint64_t min,
                      uint64_t max, uint64_t *out) {
  char *end;
  unsigned long long v;

  if (text[0] < '0' || text[0] > '9')
    return st__cli_usage("--%s: '%s' is not a non-negative integer", opt, text);
  errno = 0;
  v = strtoull(text, &end, 10);
  if (*end != '\0')
    return st__cli_usage("--%s: '%s' is not a non-negative integer", opt, text);
  if (errno == ERANGE || v > max)
    return st__cli_usage("--%s: %s is too large (at most %" PRIu64 ")", opt,
                         text, max);
  if (v < min)
    return st__cli_usage("--%s must be at least %" PRIu64 " (got %s)", opt, min,
                         text);
  *out = v;
  return 0;
}

/* A byte count with an optional binary suffix: 512, 64K, 2G. */
static int parse_bytes(const char *opt, const char *text, uint64_t *out) {
  char digits[32];
  size_t len = strlen(text);
  unsigned shift = 0;
  uint64_t v;
  int rc;

  if (len > 0 && len < sizeof digits) {
    switch (text[len - 1]) {
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    case 't':
    case 'T':
      shift = 40;
      break;
    default:
      break;
    }
  }
  if (shift == 0)
    return parse_uint(opt, text, 1, UINT64_MAX, out);
  memcpy(digits, text, len - 1);
  digits[len - 1] = '\0';
  if ((rc = parse_uint(opt, digits, 1, UINT64_MAX >> shift, &v)) != 0)
    return rc;
  *out = v << shift;
  return 0;
}

/* A list of strings taken from repeatable options (borrowed from argv). */
typedef struct strlist {
  const char **items;
  size_t n;
} strlist;

/* The options the table may hold: the per-option arrays of struct cli
 * (what was given, and from where) are this long; checked against the
 * table below. */
#define CLI_OPTIONS_CAP 128

typedef struct cli {
  int cmd;
  const char *cmd_name;
  strlist paths;
  strlist selectors;
  strlist watch;
  strlist plugins;
  int isolate;
  int no_supervise;
  int guard_pages;
  double timeout;
  const char *platform;
  int manual; /* st_manual_mode */
  uint64_t rounds;
  int skip_golden;
  uint64_t seed;
  uint64_t jobs;
  uint64_t golden_threads;
  int fail_fast;
  int strict_record;
  int strict_mistrust;  /* docs/cli.md#mistrust */
  uint64_t determinism; /* docs/cli.md#determinism; 0: off */
  int require_cases;
  int format; /* fmt_id; -1: by terminal */
  const char *output;
  const char *events;
  int log_level;
  uint64_t max_arg_bytes;
  uint64_t max_nodes;
  uint64_t max_file_bytes;
  st_load_options load;
  const char *timeout_text; /* as given, for the rerun command */
  strlist ignore;           /* --ignore GLOB */
  int strict_platforms;
  const char *dump_dir;        /* --dump-on-fail */
  const char *golden_platform; /* --golden-platform; NULL: the scenes' */
  int no_default_plugins;
  const char *log_file; /* --log-file */
  strlist reports;      /* --report FORMAT:PATH, as given */
  int junit_family;     /* 0 xunit2, 1 xunit1 */
  st__shard shard;      /* --shard, then the environment's */
  uint64_t repeat;
  int shuffle;
  uint64_t shuffle_seed;
  const char *rerun_failed;
  char **rerun_names; /* from rerun_failed; owned */
  size_t n_rerun_names;
  const char *shard_by;    /* --shard-by durations:FILE: FILE */
  st__durations durations; /* read from shard_by; owned */
  char **shard_names;      /* this shard's cases under shard_by; owned */
  size_t n_shard_names;
  const char *argv0; /* the program as invoked (SPEC §10 rerun command) */
  int argc;
  char **argv;
  unsigned char given[CLI_OPTIONS_CAP]; /* given[i]: options[i] was on the
                                        command line */
  /* docs/cli.md#configuration-file: where each option's value came from
   * (SRC_*), its last value as given, and the config file's position. */
  unsigned char source[CLI_OPTIONS_CAP];
  const char *raw[CLI_OPTIONS_CAP];
  int src_line[CLI_OPTIONS_CAP];
  int applying; /* SRC_* of the values being applied */
  size_t n_config_values;
  int color_mode;          /* --color: 0 auto, 1 always, 2 never */
  int verbose;             /* -v */
  int quiet;               /* -q */
  const char *config_path; /* --config FILE */
  int no_config;           /* --no-config */
  int show_config;         /* --show-config */
  strlist config_paths;    /* the config file's `paths` */
  int paths_from_config;   /* paths are config_paths */
  st__cli_config config;
  /* docs/cli.md#tags-and-k, #maxfail, #durations, #last-failed */
  const char *tag_expr;  /* --tag */
  const char *k_expr;    /* -k */
  strlist skips;         /* --skip */
  uint64_t maxfail;      /* --maxfail; -x is 1 */
  uint64_t slowest;      /* --durations */
  int last_failed;       /* --last-failed, --lf */
  int failed_first;      /* --failed-first, --ff */
  const char *cache_dir; /* --cache-dir; default .scenetest-cache */
  int no_cache;          /* --no-cache */
  st__filter *filter;    /* from tag_expr, k_expr, skips; owned */
  char **lf_names;       /* the last-failed state; owned */
  size_t n_lf_names;
  const st__cli_bench *bench; /* `scenetest bench` (cli/bench.h); NULL: not */
} cli;

enum { SRC_DEFAULT, SRC_CONFIG, SRC_ENV, SRC_CLI };

/* The type of an option's value states how it is parsed and checked; the
 * checks are written once, in apply_option (curl's tool_getparam.c keeps
 * its options the same way). */
typedef enum arg_type {
  ARG_FLAG,   /* no value: the int field becomes 1 */
  ARG_STRING, /* a non-empty string (what: its noun) */
  ARG_LIST,   /* a string appended to a strlist; empty allowed iff !what */
  ARG_UINT,   /* a decimal integer in [min, max] into a uint64_t */
  ARG_BYTES,  /* a byte count with an optional K/M/G/T suffix */
  ARG_CHOICE, /* one of choices[] (NULL-terminated): its index, an int */
  ARG_CUSTOM, /* parsed by its own function */
  ARG_ACTION  /* no value: its own function runs (val is NULL) */
} arg_type;

typedef struct optdef {
  const char *name; /* long name without "--" */
  char short_name;  /* 0: none */
  arg_type type;
  int cmds;          /* commands that take it */
  size_t offset;     /* the field of cli it sets (not for ARG_CUSTOM) */
  uint64_t min, max; /* ARG_UINT */
  const char *what;  /* ARG_STRING, ARG_LIST: "--X needs WHAT" if empty */
  const char *const *choices; /* ARG_CHOICE */
  /* ARG_CUSTOM, ARG_ACTION: 0 or an exit status */
  int (*custom)(cli *c, const struct optdef *o, const char *val /* IN */);
} optdef;

static int parse_log_level(cli *c, const struct optdef *o, const char *val);
static int parse_watch(cli *c, const struct optdef *o, const char *val);
static int parse_timeout(cli *c, const struct optdef *o, const char *val);
static int handled_first(cli *c, const struct optdef *o, const char *val);
static int parse_report(cli *c, const struct optdef *o, const char *val);
static int parse_shard(cli *c, const struct optdef *o, const char *val);
static int parse_shard_by(cli *c, const struct optdef *o, const char *val);
static int parse_shuffle_seed(cli *c, const struct optdef *o, const char *val);
static int set_exitfirst(cli *c, const struct optdef *o, const char *val);

static const char *const manual_names[] = {"exclude", "include", "only", NULL};
/* In st__fmt order; `list` takes text and json only (checked after
 * parsing). */
static const char *const format_names[] = {"text", "tap",  "junit",
                                           "json", "html", NULL};
static const char *const junit_families[] = {"xunit2", "xunit1", NULL};
static const char *const color_modes[] = {"auto", "always", "never", NULL};

#define F(field) offsetof(cli, field)
#define FLAG(name, cmds, field)                                                \
  { name, 0, ARG_FLAG, cmds, F(field), 0, 0, NULL, NULL, NULL }
#define STRING(name, cmds, field, what)                                        \
  { name, 0, ARG_STRING, cmds, F(field), 0, 0, what, NULL, NULL }
#define LIST(name, cmds, field, what)                                          \
  { name, 0, ARG_LIST, cmds, F(field), 0, 0, what, NULL, NULL }
#define UINT(name, s, cmds, field, lo, hi)                                     \
  { name, s, ARG_UINT, cmds, F(field), lo, hi, NULL, NULL, NULL }
#define BYTES(name, cmds, field)                                               \
  { name, 0, ARG_BYTES, cmds, F(field), 1, UINT64_MAX, NULL, NULL, NULL }
#define CHOICE(name, cmds, field, list)                                        \
  { name, 0, ARG_CHOICE, cmds, F(field), 0, 0, NULL, list, NULL }
#define CUSTOM(name, cmds, fn)                                                 \
  { name, 0, ARG_CUSTOM, cmds, 0, 0, 0, NULL, NULL, fn }
#define ACTION(name, cmds, fn)                                                 \
  { name, 0, ARG_ACTION, cmds, 0, 0, 0, NULL, NULL, fn }

/* Every option of every command. A new option is a row here, a field of
 * cli (or an ARG_CUSTOM function) and a line of usage_text; its parsing
 * and checks come from its type. --help and --version are answered before
 * parsing (they win anywhere). */
static const optdef options[] = {
    {"help", 'h', ARG_ACTION, CMD_ALL, 0, 0, 0, NULL, NULL, handled_first},
    ACTION("version", CMD_ALL, handled_first),
    STRING("platform", CMD_SELECT, platform, "a platform name"),
    LIST("case", CMD_SELECT, selectors,
         "a selector (scene, scene::case or ::case)"),
    CHOICE("manual", CMD_SELECT, manual, manual_names),
    UINT("rounds", 0, CMD_RUN, rounds, 1, 1000000000u),
    FLAG("skip-golden", CMD_RUN, skip_golden),
    UINT("seed", 0, CMD_RUN, seed, 0, UINT64_MAX),
    UINT("jobs", 'j', CMD_RUN, jobs, 1, 4096),
    UINT("golden-threads", 0, CMD_RUN, golden_threads, 1, 4096),
    FLAG("fail-fast", CMD_RUN, fail_fast),
    CHOICE("format", CMD_SELECT, format, format_names),
    CHOICE("junit-family", CMD_RUN, junit_family, junit_families),
    CUSTOM("report", CMD_RUN, parse_report),
    STRING("output", CMD_RUN, output, "a file name"),
    STRING("events", CMD_RUN, events, "a file name"),
    STRING("log-file", CMD_RUN, log_file, "a file name"),
    CUSTOM("log-level", CMD_ALL, parse_log_level),
    BYTES("max-arg-bytes", CMD_ALL, max_arg_bytes),
    UINT("max-nodes", 0, CMD_ALL, max_nodes, 1, SIZE_MAX),
    BYTES("max-file-bytes", CMD_ALL, max_file_bytes),
    FLAG("require-cases", CMD_SELECT, require_cases),
    FLAG("strict-record", CMD_RUN, strict_record),
    FLAG("strict-mistrust", CMD_RUN, strict_mistrust),
    UINT("determinism", 0, CMD_RUN, determinism, 2, 1000000),
    CUSTOM("watch", CMD_RUN, parse_watch),
    LIST("plugin", CMD_ALL, plugins, NULL),
    FLAG("isolate", CMD_RUN, isolate),
    FLAG("no-supervise", CMD_RUN, no_supervise),
    FLAG("guard-pages", CMD_RUN, guard_pages),
    CUSTOM("timeout", CMD_RUN, parse_timeout),
    FLAG("strict-platforms", CMD_ALL, strict_platforms),
    LIST("ignore", CMD_ALL, ignore, "a glob"),
    STRING("dump-on-fail", CMD_RUN, dump_dir, "a directory"),
    STRING("golden-platform", CMD_RUN, golden_platform, "a platform name"),
    FLAG("no-default-plugins", CMD_ALL, no_default_plugins),
    CUSTOM("shard", CMD_SELECT, parse_shard),
    CUSTOM("shard-by", CMD_SELECT, parse_shard_by),
    UINT("repeat", 0, CMD_RUN, repeat, 1, 1000000),
    FLAG("shuffle", CMD_RUN, shuffle),
    CUSTOM("shuffle-seed", CMD_RUN, parse_shuffle_seed),
    STRING("rerun-failed", CMD_SELECT, rerun_failed, "a report file"),
    CHOICE("color", CMD_RUN, color_mode, color_modes),
    {"verbose", 'v', ARG_FLAG, CMD_RUN, F(verbose), 0, 0, NULL, NULL, NULL},
    {"quiet", 'q', ARG_FLAG, CMD_RUN, F(quiet), 0, 0, NULL, NULL, NULL},
    STRING("config", CMD_ALL, config_path, "a file name"),
    FLAG("no-config", CMD_ALL, no_config),
    FLAG("show-config", CMD_ALL, show_config),
    STRING("tag", CMD_SELECT, tag_expr, "an expression"),
    {"keyword", 'k', ARG_STRING, CMD_SELECT, F(k_expr), 0, 0, "an expression",
     NULL, NULL},
    LIST("skip", CMD_SELECT, skips,
         "a selector (scene, scene::case or ::case)"),
    UINT("maxfail", 0, CMD_RUN, maxfail, 1, UINT32_MAX),
    {"exitfirst", 'x', ARG_ACTION, CMD_RUN, 0, 0, 0, NULL, NULL, set_exitfirst},
    UINT("durations", 0, CMD_RUN, slowest, 0, UINT32_MAX),
    FLAG("last-failed", CMD_SELECT, last_failed),
    FLAG("lf", CMD_SELECT, last_failed),
    FLAG("failed-first", CMD_SELECT, failed_first),
    FLAG("ff", CMD_SELECT, failed_first),
    STRING("cache-dir", CMD_SELECT, cache_dir, "a directory"),
    FLAG("no-cache", CMD_SELECT, no_cache),
};
#define N_OPTIONS (sizeof options / sizeof options[0])
_Static_assert(N_OPTIONS <= CLI_OPTIONS_CAP, "CLI_OPTIONS_CAP too small");

static int takes_value(const optdef *o) {
  return o->type != ARG_FLAG && o->type != ARG_ACTION;
}

/* Whether option --name was on the command line (for the rerun command). */
static int given(const cli *c, const char *name) {
  size_t i;
  for (i = 0; i < N_OPTIONS; i++)
    if (strcmp(options[i].name, name) == 0)
      return c->given[i];
  return 0;
}

/* "a, b or c" from a NULL-terminated list. */
static void join_choices(const char *const *list, char *buf, size_t size) {
  size_t i, n = 0, used = 0;
  while (list[n] != NULL)
    n++;
  buf[0] = '\0';
  for (i = 0; i < n && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s",
                             i == 0       ? ""
                             : i + 1 == n ? " or "
                                          : ", ",
                             list[i]);
}

/* Applies one option's value by its type: every check of a type is here
 * once. Returns 0 or an exit status. */
static int apply_option(cli *c, const optdef *o, const char *flag,
                        const char *val) {
  char *field = (char *)c + o->offset;
  char names[128];
  size_t i;

  if (!(o->cmds & c->cmd))
    return st__cli_usage("option '%s' does not apply to '%s'", flag,
                         c->cmd_name);
  c->given[o - options] = 1;
  /* A list on the command line replaces the configuration file's. */
  if (o->type == ARG_LIST && c->applying == SRC_CLI &&
      c->source[o - options] == SRC_CONFIG)
    ((strlist *)field)->n = 0;
  c->source[o - options] = (unsigned char)c->applying;
  c->raw[o - options] = val != NULL ? val : "true";
  switch (o->type) {
  case ARG_FLAG:
    *(int *)field = 1;
    return 0;
  case ARG_STRING:
  case ARG_LIST:
    if (val[0] == '\0' && o->what != NULL)
      return st__cli_usage("--%s needs %s", o->name, o->what);
    if (o->type == ARG_STRING) {
      *(const char **)field = val;
    } else {
      strlist *l = (strlist *)field;
      l->items[l->n++] = val;
    }
    return 0;
  case ARG_UINT:
    return parse_uint(o->name, val, o->min, o->max, (uint64_t *)field);
  case ARG_BYTES:
    return parse_bytes(o->name, val, (uint64_t *)field);
  case ARG_CHOICE:
    for (i = 0; o->choices[i] != NULL; i++)
      if (strcmp(val, o->choices[i]) == 0) {
        *(int *)field = (int)i;
        return 0;
      }
    join_choices(o->choices, names, sizeof names);
    return st__cli_usage("--%s must be %s (got '%s')", o->name, names, val);
  case ARG_CUSTOM:
  case ARG_ACTION:
    return o->custom(c, o, val);
  }
  return 0;
}

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
  char name[16];
  (void)o;
  if (colon == NULL || colon[1] == '\0' || (size_t)(colon - val) >= sizeof name)
    return st__cli_usage("--report must be FORMAT:PATH with FORMAT tap, "
                         "junit, json or html (got '%s')",
                         val);
  snprintf(name, sizeof name, "%.*s", (int)(colon - val), val);
  switch (st__fmt_parse(name)) {
  case ST__FMT_TAP:
  case ST__FMT_JUNIT:
  case ST__FMT_JSON:
  case ST__FMT_HTML:
    break;
  default:
    return st__cli_usage("--report: unknown format '%s'; formats: tap, junit, "
                         "json, html",
                         name);
  }
  c->reports.items[c->reports.n++] = val;
  return 0;
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
  return parse_uint("shuffle-seed", val, 0, UINT64_MAX, &c->shuffle_seed);
}

static const optdef *find_long(const char *name, size_t len) {
  size_t i;
  for (i = 0; i < N_OPTIONS; i++)
    if (strlen(options[i].name) == len &&
        strncmp(options[i].name, name, len) == 0)
      return &options[i];
  return NULL;
}

static const optdef *find_short(char ch) {
  size_t i;
  for (i = 0; i < N_OPTIONS; i++)
    if (options[i].short_name == ch)
      return &options[i];
  return NULL;
}

/* An unknown long option, with the nearest name (docs/cli.md). */
static int unknown_long(const char *arg, size_t len) {
  const char *names[N_OPTIONS];
  char word[64];
  const char *dym;
  size_t i;
  for (i = 0; i < N_OPTIONS; i++)
    names[i] = options[i].name;
  snprintf(word, sizeof word, "%.*s", (int)(len < 63 ? len : 63), arg + 2);
  dym = len < 63 ? st__suggest(word, names, N_OPTIONS) : NULL;
  if (dym != NULL)
    return st__cli_usage("unknown option '%.*s'; did you mean --%s? (see "
                         "'scenetest --help')",
                         (int)(len + 2), arg, dym);
  return st__cli_usage("unknown option '%.*s'; see 'scenetest --help'",
                       (int)(len + 2), arg);
}

/* getopt_long's conventions by hand, to own the error messages: options
 * anywhere among the paths, "--opt VAL" and "--opt=VAL", "-j N" and
 * "-jN", and "--" ending the options. Returns 0 or an exit status. */
static int parse_args(cli *c, int argc, char **argv) {
  int i, rc, only_paths = 0;

  for (i = 2; i < argc; i++) {
    const char *arg = argv[i];
    const optdef *o;
    const char *val = NULL;
    char flag[64];

    if (only_paths || arg[0] != '-' || arg[1] == '\0') {
      c->paths.items[c->paths.n++] = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_paths = 1;
      continue;
    }
    if (arg[1] == '-') {
      const char *name = arg + 2, *eq = strchr(name, '=');
      size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
      o = find_long(name, len);
      if (o == NULL)
        return unknown_long(arg, len);
      snprintf(flag, sizeof flag, "--%s", o->name);
      if (eq != NULL) {
        if (!takes_value(o))
          return st__cli_usage("option '%s' takes no value", flag);
        val = eq + 1;
      }
    } else {
      o = find_short(arg[1]);
      if (o == NULL)
        return st__cli_usage("unknown option '-%c'; see 'scenetest --help'",
                             arg[1]);
      snprintf(flag, sizeof flag, "-%c", o->short_name);
      if (arg[2] != '\0') {
        if (!takes_value(o))
          return st__cli_usage("unknown option '%s'; see 'scenetest --help'",
                               arg);
        val = arg + 2;
      }
    }
    if (takes_value(o) && val == NULL) {
      if (i + 1 >= argc)
        return st__cli_usage("option '%s' needs a value", flag);
      val = argv[++i];
    }
    if ((rc = apply_option(c, o, flag, val)) != 0)
      return rc;
  }
  return 0;
}

/* docs/cli.md#configuration-file: at most this many values in the
 * configuration file (each list has room for argc of them more). */
#define CONFIG_VALUES_MAX 1024

static int option_index(const char *name) {
  const optdef *o = find_long(name, strlen(name));
  return o != NULL ? (int)(o - options) : -1;
}

/* Options that the configuration file may not set. */
static int config_only_cli(const char *name) {
  return strcmp(name, "help") == 0 || strcmp(name, "version") == 0 ||
         strcmp(name, "config") == 0 || strcmp(name, "no-config") == 0 ||
         strcmp(name, "show-config") == 0;
}

/* One value of the configuration file, applied as its option would be
 * (st__cli_config_apply): flags take true or false, only repeatable
 * options take lists, and an option of another command is left alone. */
static int config_apply(void *ctx, const char *key, const char *value,
                        int is_list, const char *file, int line, int col) {
  cli *c = ctx;
  const optdef *o;
  char flag[64];
  int rc = 0;

  st__cli_usage_at(file, line, col);
  if (++c->n_config_values > CONFIG_VALUES_MAX) {
    rc = st__cli_usage("more than %d values in the configuration file",
                       CONFIG_VALUES_MAX);
    goto out;
  }
  if (strcmp(key, "paths") == 0) {
    if (value[0] == '\0')
      rc = st__cli_usage("'paths' needs a scene file or a directory");
    else
      c->config_paths.items[c->config_paths.n++] = value;
    goto out;
  }
  o = find_long(key, strlen(key));
  snprintf(flag, sizeof flag, "%s", key);
  if (o == NULL || !(o->cmds & c->cmd))
    goto out;
  c->src_line[o - options] = line;
  if (is_list && o->type != ARG_LIST && o->custom != parse_report &&
      o->custom != parse_watch) {
    rc = st__cli_usage("'%s' takes one value, not a list", key);
  } else if (o->type == ARG_FLAG) {
    if (strcmp(value, "true") == 0)
      rc = apply_option(c, o, flag, NULL);
    else if (strcmp(value, "false") != 0)
      rc = st__cli_usage("'%s' is true or false (got '%s')", key, value);
  } else {
    rc = apply_option(c, o, flag, value);
  }
out:
  st__cli_usage_at(NULL, 0, 0);
  return rc;
}

/* --config FILE and --no-config, read before the configuration file is:
 * which file to read comes first. The options are parsed again with the
 * rest. */
static void prescan_config(cli *c, int argc, char **argv) {
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      break;
    if (strcmp(argv[i], "--no-config") == 0)
      c->no_config = 1;
    else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
      c->config_path = argv[++i];
    else if (strncmp(argv[i], "--config=", 9) == 0)
      c->config_path = argv[i] + 9;
  }
  if (c->config_path != NULL && c->config_path[0] == '\0')
    c->config_path = NULL; /* parse_args says "--config needs a file" */
}

static int load_config(cli *c, int argc, char **argv) {
  const char *keys[N_OPTIONS];
  size_t n = 0;
  int rc;
  for (size_t i = 0; i < N_OPTIONS; i++)
    if (!config_only_cli(options[i].name))
      keys[n++] = options[i].name;
  prescan_config(c, argc, argv);
  c->applying = SRC_CONFIG;
  rc = st__cli_config_load(&c->config, c->config_path, c->no_config, keys, n,
                           config_apply, c);
  c->applying = SRC_CLI;
  return rc;
}

static void show_list(FILE *f, const strlist *l) {
  fputc('[', f);
  for (size_t i = 0; i < l->n; i++)
    fprintf(f, "%s%s", i > 0 ? ", " : "", l->items[i]);
  fputc(']', f);
}

/* An option's value as --show-config prints it. */
static void show_value(FILE *f, const cli *c, const optdef *o) {
  const char *field = (const char *)c + o->offset;
  const char *raw = c->raw[o - options];
  if (strcmp(o->name, "report") == 0 || strcmp(o->name, "watch") == 0) {
    show_list(f, o->name[0] == 'r' ? &c->reports : &c->watch);
    return;
  }
  switch (o->type) {
  case ARG_FLAG:
    fputs(*(const int *)field ? "true" : "false", f);
    return;
  case ARG_LIST:
    show_list(f, (const strlist *)field);
    return;
  case ARG_STRING:
    fputs(*(const char *const *)field != NULL ? *(const char *const *)field
                                              : "-",
          f);
    return;
  case ARG_CHOICE:
    fputs(*(const int *)field >= 0 ? o->choices[*(const int *)field] : "-", f);
    return;
  case ARG_UINT:
  case ARG_BYTES:
    if (raw == NULL) {
      fprintf(f, "%" PRIu64, *(const uint64_t *)field);
      return;
    }
    break;
  default:
    break;
  }
  fputs(raw != NULL ? raw : "-", f);
}

/* --show-config (docs/cli.md#configuration-file): every option's merged
 * value and where it came from, then the paths. */
static int show_config(const cli *c) {
  const char *file = c->config.path;
  printf("# configuration file: %s\n", file != NULL ? file : "(none)");
  for (size_t i = 0; i < N_OPTIONS; i++) {
    const optdef *o = &options[i];
    if (config_only_cli(o->name) || !(o->cmds & c->cmd))
      continue;
    printf("%s: ", o->name);
    show_value(stdout, c, o);
    switch (c->source[i]) {
    case SRC_CONFIG:
      printf("  # %s:%d\n", file, c->src_line[i]);
      break;
    case SRC_ENV:
      printf("  # SCENETEST_LOG_LEVEL\n");
      break;
    case SRC_CLI:
      printf("  # command line\n");
      break;
    default:
      printf("  # default\n");
      break;
    }
  }
  printf("paths: ");
  show_list(stdout, &c->paths);
  printf("  # %s\n", c->paths.n == 0        ? "none"
                     : c->paths_from_config ? file
                                            : "command line");
  return fflush(stdout) == 0 ? EXIT_PASS : EXIT_INTERNAL;
}

/* The load-time checks' warnings (SPEC §13), "FILE:LINE:COL: warning:". */
static void print_load_warnings(const st_error_list *warnings) {
  for (size_t i = 0; i < warnings->count; i++) {
    const st_error *w = &warnings->items[i];
    fprintf(stderr, "%s:%d:%d: warning: %s\n", w->file, w->line, w->column,
            w->message);
  }
}

static void print_load_errors(const st_error_list *errors) {
  char buf[ST_ERROR_FILE_MAX + ST_ERROR_MESSAGE_MAX + 64];
  size_t i;

  for (i = 0; i < errors->count; i++) {
    const st_error *e = &errors->items[i];
    if (e->file[0] != '\0')
      fprintf(stderr, "%s\n", st_error_format(e, buf, sizeof buf));
    else
      fprintf(stderr, "scenetest: error: %s\n", e->message);
  }
}

/* Loads every path, reporting every error of every file (a user fixing
 * scenes wants them all at once). */
static int load_all(const cli *c, st_registry *reg, st_scene_set **out) {
  st_scene_set *set = NULL;
  st_error_list errors, warnings;
  size_t i;
  int status = 0;
  st_status rc;
  st__validate val;
  st__scene_check hooks;
  st__load_ext ext;

  /* The validation pass (SPEC §13): `check` holds platforms strictly. */
  if ((rc = st__validate_init(&val, reg, c->plugins.n > 0,
                              c->cmd == CMD_CHECK || c->strict_platforms,
                              &hooks)) != ST_OK)
    return internal_error("starting the validation pass", rc);
  /* Cases whose golden backend the run lacks: errors only under
   * --strict-platforms; `check` names them once (docs/cli.md). */
  val.strict_needs = c->strict_platforms;
  val.cli_golden = c->golden_platform;
  val.skip_golden = c->skip_golden;
  val.compile_programs = c->cmd == CMD_CHECK;
  memset(&ext, 0, sizeof ext);
  ext.check = &hooks;
  ext.warnings = &warnings;
  ext.ignore = c->ignore.items;
  ext.n_ignore = c->ignore.n;
  st_error_list_init(&errors);
  st_error_list_init(&warnings);
  if ((rc = st_scene_set_new(&set)) != ST_OK) {
    st__validate_free(&val);
    return internal_error("creating the scene set", rc);
  }
  for (i = 0; i < c->paths.n; i++) {
    size_t before = errors.count;
    rc = st__scene_set_load_path_ext(set, c->paths.items[i], &c->load, &ext,
                                     &errors);
    if (rc == ST_OK)
      continue;
    if (errors.count == before) {
      /* The loader said no without saying why: still one line. */
      if (rc == ST_ENOMEM || rc == ST_EINTERNAL)
        status = internal_error(c->paths.items[i], rc);
      else
        status = st__cli_usage("%s: %s", c->paths.items[i], st_status_str(rc));
    } else if (rc == ST_ENOMEM || rc == ST_EINTERNAL) {
      status = EXIT_INTERNAL;
    } else if (status == 0) {
      status = EXIT_USAGE;
    }
  }
  print_load_warnings(&warnings);
  if (c->cmd == CMD_CHECK && status == 0 && errors.count == 0)
    st__cli_warn_needs(&val);
  print_load_errors(&errors);
  if (val.uncompiled > 0)
    fprintf(stderr,
            "scenetest: note: %zu golden program(s) not compiled: the torch "
            "plugin is not loaded (give --plugin PATH/scenetest_torch.so; "
            "docs/torch.md)\n",
            val.uncompiled);
  st_error_list_free(&errors);
  st_error_list_free(&warnings);
  st__validate_free(&val);
  if (status != 0) {
    st_scene_set_free(set);
    return status;
  }
  *out = set;
  return 0;
}

static void options_from_cli(const cli *c, st_run_options *opts) {
  st_run_options_init(opts);
  opts->platform = c->platform;
  opts->selectors = c->selectors.items;
  opts->n_selectors = c->selectors.n;
  opts->manual = (st_manual_mode)c->manual;
  opts->rounds = (unsigned)c->rounds;
  opts->skip_golden = c->skip_golden;
  opts->seed = c->seed;
  if (c->jobs != 0)
    opts->jobs = (unsigned)c->jobs;
  opts->golden_threads = (unsigned)c->golden_threads;
  opts->fail_fast = c->fail_fast;
  opts->strict_record = c->strict_record;
  opts->strict_mistrust = c->strict_mistrust;
  opts->determinism = (unsigned)c->determinism;
  opts->watch = c->watch.items;
  opts->n_watch = c->watch.n;
  opts->isolate = c->isolate;
  opts->guard_pages = c->guard_pages;
  opts->timeout = c->timeout;
  opts->dump_dir = c->dump_dir;
  opts->golden_platform = c->golden_platform;
  /* `run` supervises unless told not to (SPEC §9); the library does not
   * unless asked. */
  opts->supervise = c->cmd == CMD_RUN && !c->no_supervise;
  opts->shard_index = c->shard.index;
  opts->shard_total = c->shard.total;
  opts->repeat = c->repeat > 1 ? (unsigned)c->repeat : 1;
  opts->shuffle = c->shuffle;
  opts->shuffle_seed = c->shuffle_seed;
  if (c->rerun_failed != NULL) {
    opts->use_only_cases = 1;
    opts->only_cases = (const char *const *)c->rerun_names;
    opts->n_only_cases = c->n_rerun_names;
  }
  /* --fail-fast is -x (docs/cli.md#maxfail). */
  opts->maxfail = c->maxfail > 0 ? (unsigned)c->maxfail : c->fail_fast ? 1 : 0;
  if (c->filter != NULL) {
    opts->case_filter = st__filter_keep;
    opts->case_filter_data = c->filter;
  }
}

/* Options that need more than their own value: the formats a command
 * takes, the shard from the environment, the default shuffle seed, the
 * cases an earlier report says failed. 0 or an exit status. */
static int settle_options(cli *c) {
  int rc;
  st__shard option = c->shard;

  if (c->cmd == CMD_LIST && c->format >= 0 && c->format != ST__FMT_TEXT &&
      c->format != ST__FMT_JSON)
    return st__cli_usage("list: --format must be text or json (got '%s')",
                         st__fmt_name(c->format));
  /* The CI engines' variables shard `run` (SPEC §10); `list` shows a
   * shard only when asked with --shard. */
  if (c->cmd == CMD_RUN && (rc = st__shard_resolve(&option, 1, &c->shard)) != 0)
    return rc;
  if (c->shuffle && !given(c, "shuffle-seed")) {
    /* SPEC §10: CLOCK_REALTIME ns mod 2^32, printed in every report so
     * the order can be replayed. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    c->shuffle_seed =
        ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) &
        0xffffffffu;
  }
  if (c->rerun_failed != NULL &&
      (rc = st__rerun_read(c->rerun_failed, &c->rerun_names,
                           &c->n_rerun_names)) != 0)
    return rc;
  if (c->shard_by != NULL &&
      (rc = st__durations_read(c->shard_by, &c->durations)) != 0)
    return rc;
  return 0;
}

/* --shard-by durations:FILE (docs/cli.md#sharding): the selection
 * without the shard, split longest processing time first, becomes
 * only_cases (this shard's), which the library then takes as the shard's
 * cases as they are. 0 or an exit status. */
static int shard_by_durations(cli *c, const st_scene_set *set,
                              st_run_options *opts) {
  st_run_options all = *opts;
  st_case_ref *refs = NULL;
  char **ids = NULL;
  unsigned *shard_of = NULL;
  size_t n = 0, i, k = 0;
  st_error err;
  st_status rc;
  int status = 0;

  if (c->shard_by == NULL || opts->shard_total <= 1)
    return 0;
  all.shard_total = 0;
  all.shard_index = 0;
  st_error_clear(&err);
  if ((rc = st_select_cases(set, &all, &refs, &n, &err)) != ST_OK)
    return report_error(&err, rc);
  ids = calloc(n + 1, sizeof *ids);
  shard_of = calloc(n + 1, sizeof *shard_of);
  if (ids == NULL || shard_of == NULL)
    goto oom;
  for (i = 0; i < n; i++) {
    const st_scene *sc = refs[i].scene;
    const char *sn = st_scene_name(sc),
               *cn = st_scene_case_name(sc, refs[i].index);
    if ((ids[i] = malloc(strlen(sn) + strlen(cn) + 3)) == NULL)
      goto oom;
    sprintf(ids[i], "%s::%s", sn, cn);
  }
  if (st__shard_by_assign(&c->durations, (const char *const *)ids, n,
                          opts->shard_total, shard_of) != 0)
    goto oom;
  /* Kept in ids' order (the selection's): compacted in place. */
  for (i = 0; i < n; i++) {
    if (shard_of[i] == opts->shard_index)
      ids[k++] = ids[i];
    else
      free(ids[i]);
  }
  c->shard_names = ids;
  c->n_shard_names = k;
  ids = NULL;
  opts->use_only_cases = 1;
  opts->only_cases = (const char *const *)c->shard_names;
  opts->n_only_cases = c->n_shard_names;
  opts->shard_preselected = 1;
  goto out;
oom:
  status = internal_error("splitting by durations", ST_ENOMEM);
out:
  if (ids != NULL)
    st__names_free(ids, n);
  free(shard_of);
  free(refs);
  return status;
}

/* --rerun-failed names that no loaded case has: a warning each (the
 * scene may have changed since the report). */
static void warn_unknown_names(const cli *c, const st_scene_set *set) {
  size_t i, s, k, n = st_scene_set_count(set);
  for (i = 0; i < c->n_rerun_names; i++) {
    const char *name = c->rerun_names[i], *sep = strstr(name, "::");
    int found = 0;
    for (s = 0; sep != NULL && s < n && !found; s++) {
      const st_scene *sc = st_scene_set_get(set, s);
      if (strlen(st_scene_name(sc)) != (size_t)(sep - name) ||
          strncmp(st_scene_name(sc), name, (size_t)(sep - name)) != 0)
        continue;
      for (k = 0; k < st_scene_case_count(sc) && !found; k++)
        found = strcmp(st_scene_case_name(sc, k), sep + 2) == 0;
    }
    if (!found)
      st_log(ST_LOG_WARNING,
             "--rerun-failed: '%s' (from %s) is not among the loaded "
             "cases",
             name, c->rerun_failed);
  }
}

/* A platform no backend provides is a usage error listing those that
 * exist (SPEC §5). */
static int check_one_platform(const char *flag, const char *platform,
                              st_registry *reg) {
  char names[512];
  if (st_registry_has_platform(reg, platform))
    return 0;
  st_registry_platforms(reg, names, sizeof names);
  if (strcmp(platform, "torch") == 0)
    return st__cli_usage(
        "unknown platform 'torch' (%s): the torch plugin is "
        "not built or not installed; build scenetest with "
        "libtorch (meson setup -Dtorch=enabled, or "
        "-Dtorch_dir=PATH for a PyTorch wheel; docs/torch.md) "
        "or name it with --plugin lazy:PATH/scenetest_torch.so; "
        "platforms: %s",
        flag, names);
  return st__cli_usage("unknown platform '%s'%s%s; platforms: %s", platform,
                       flag[2] == 'g' ? " for " : "",
                       flag[2] == 'g' ? flag : "", names);
}

static int check_platform(const cli *c, st_registry *reg) {
  int rc = check_one_platform("--platform", c->platform, reg);
  if (rc == 0 && c->golden_platform != NULL &&
      strcmp(c->golden_platform, ST_BACKEND_REFERENCE) != 0)
    rc = check_one_platform("--golden-platform", c->golden_platform, reg);
  return rc;
}

/* SPEC §12: the installed plugins ($libdir/scenetest/plugins) and those in
 * the directories of SCENETEST_PLUGIN_PATH (colon-separated, searched
 * first) are declared lazily: only their ELF notes are read, nothing is
 * loaded until a lookup needs one of their platforms. A platform already
 * known (built in, or from an explicit --plugin) hides a default
 * declaration of it; a file that cannot be declared is a warning, since
 * an installed plugin must not break every run. */
static void declare_one(st_registry *reg, const char *file) {
  char spec[4200], *platforms = NULL, *tok, *save = NULL;
  st_error err;
  int hidden = 0;
  snprintf(spec, sizeof spec, "lazy:%s", file);
  st_error_clear(&err);
  if (st_plugin_read_platforms(spec + 5, &platforms, &err) != ST_OK) {
    st_log(ST_LOG_WARNING, "default plugin %s not declared: %s", spec + 5,
           err.message);
    return;
  }
  for (tok = strtok_r(platforms, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save))
    if (st_registry_has_platform(reg, tok))
      hidden = 1;
  free(platforms);
  if (hidden)
    return;
  st_error_clear(&err);
  if (st_plugin_load(reg, spec, &err) != ST_OK)
    st_log(ST_LOG_WARNING, "default plugin %s not declared: %s", spec + 5,
           err.message);
}

static void declare_dir(st_registry *reg, const char *dir, size_t len) {
  char path[4096];
  DIR *d;
  struct dirent *de;
  char **names = NULL;
  size_t n = 0, cap = 0, i;

  if (len == 0 || len >= sizeof path - 2)
    return;
  memcpy(path, dir, len);
  path[len] = '\0';
  if ((d = opendir(path)) == NULL)
    return;
  while ((de = readdir(d)) != NULL) {
    size_t nl = strlen(de->d_name);
    if (de->d_name[0] == '.' || nl < 4 ||
        strcmp(de->d_name + nl - 3, ".so") != 0)
      continue;
    if (n == cap) {
      char **p = realloc(names, (cap ? cap * 2 : 8) * sizeof *names);
      if (p == NULL)
        break;
      names = p;
      cap = cap ? cap * 2 : 8;
    }
    if ((names[n] = strdup(de->d_name)) != NULL)
      n++;
  }
  closedir(d);
  /* Bytewise order, so which of two files wins does not depend on the
   * directory's order. */
  for (i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  for (i = 0; i < n; i++) {
    char file[4200];
    snprintf(file, sizeof file, "%s/%s", path, names[i]);
    declare_one(reg, file);
  }
  for (i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

static void declare_default_plugins(st_registry *reg) {
  const char *env = getenv("SCENETEST_PLUGIN_PATH");
  while (env != NULL && *env != '\0') {
    const char *colon = strchr(env, ':');
    size_t len = colon ? (size_t)(colon - env) : strlen(env);
    declare_dir(reg, env, len);
    env = colon ? colon + 1 : NULL;
  }
  /* The build tree's own plugins before the installed ones: a binary run
   * from its build directory tests what was built beside it. */
  st__cli_declare_build_tree(reg, declare_one);
  declare_dir(reg, ST_PLUGIN_DIR, strlen(ST_PLUGIN_DIR));
}

/* Selects; prints "no cases selected" when the filters left nothing.
 * Returns -1 to go on, else the exit status. */
static int select_cases(const cli *c, const st_scene_set *set,
                        const st_run_options *opts, st_case_ref **refs,
                        size_t *n) {
  st_error err;
  st_status rc;

  st_error_clear(&err);
  rc = st_select_cases(set, opts, refs, n, &err);
  if (rc != ST_OK)
    return report_error(&err, rc);
  if (*n > 0)
    return -1;
  if (c->require_cases)
    return st__cli_usage("no cases selected (platform '%s'; --require-cases "
                         "was given)",
                         c->platform);
  fprintf(stderr, "scenetest: no cases selected (platform '%s')\n",
          c->platform);
  return EXIT_PASS;
}

static int cmd_check(const cli *c, const st_scene_set *set) {
  size_t i, cases = 0, n = st_scene_set_count(set);
  (void)c;
  for (i = 0; i < n; i++)
    cases += st_scene_case_count(st_scene_set_get(set, i));
  printf("ok: %zu scene%s, %zu case%s\n", n, n == 1 ? "" : "s", cases,
         cases == 1 ? "" : "s");
  return EXIT_PASS;
}

/* `list --format json`: one array, each case with where it is written
 * and where it runs. platforms null: every platform; manual true, false
 * or the platforms on which it is manual. */
static void list_json(const st_case_ref *refs, size_t n) {
  size_t i;
  fputs("[", stdout);
  for (i = 0; i < n; i++) {
    const st__case *kc = &refs[i].scene->cases[refs[i].index];
    fputs(i > 0 ? ",\n " : "\n ", stdout);
    fputs("{\"scene\": ", stdout);
    st__json_string(stdout, st_scene_name(refs[i].scene));
    fputs(", \"case\": ", stdout);
    st__json_string(stdout, kc->name);
    fputs(", \"file\": ", stdout);
    st__json_string(stdout, st_scene_file(refs[i].scene));
    fprintf(stdout, ", \"line\": %d, \"platforms\": ", kc->line);
    if (!kc->has_platforms) {
      fputs("null", stdout);
    } else {
      st__json_string_array(stdout, (const char *const *)kc->platforms,
                            kc->n_platforms);
    }
    fputs(", \"tags\": ", stdout);
    st__cli_json_tags(stdout, refs[i].scene, refs[i].index);
    fputs(", \"manual\": ", stdout);
    if (kc->manual_all) {
      fputs("true", stdout);
    } else if (kc->n_manual == 0) {
      fputs("false", stdout);
    } else {
      st__json_string_array(stdout, (const char *const *)kc->manual_platforms,
                            kc->n_manual);
    }
    fputc('}', stdout);
  }
  fputs(n > 0 ? "\n]\n" : "]\n", stdout);
}

static int cmd_list(const cli *c, const st_scene_set *set,
                    const st_run_options *opts) {
  st_case_ref *refs = NULL;
  size_t i, n = 0;
  int status = select_cases(c, set, opts, &refs, &n);

  if (status > 0)
    return status;
  if (c->format == ST__FMT_JSON) {
    list_json(refs, n);
  } else {
    /* A manual case is listed (under --manual include|only) with a mark,
     * so a reader sees why a plain run leaves it out. */
    for (i = 0; i < n; i++)
      printf("%s::%s%s\n", st_scene_name(refs[i].scene),
             st_scene_case_name(refs[i].scene, refs[i].index),
             st_scene_case_is_manual(refs[i].scene, refs[i].index, c->platform)
                 ? "  (manual)"
                 : "");
  }
  free(refs);
  return EXIT_PASS;
}

/* The options the rerun command must repeat to reproduce a case, beyond
 * --case, --seed and --platform: without --plugin a plugin's platform does
 * not exist, without --max-nodes the file may not load, and without
 * --timeout a hanging case hangs. NULL on allocation failure. */
static char *rerun_options(const cli *c) {
  char *buf = NULL;
  size_t len = 0, i;
  FILE *f = open_memstream(&buf, &len);

  if (f == NULL)
    return NULL;
  if (c->manual != ST_MANUAL_EXCLUDE)
    fputs(" --manual include", f);
  if (c->rounds != 0)
    fprintf(f, " --rounds %" PRIu64, c->rounds);
  if (c->skip_golden)
    fputs(" --skip-golden", f);
  if (c->strict_record)
    fputs(" --strict-record", f);
  if (c->strict_mistrust)
    fputs(" --strict-mistrust", f);
  if (c->determinism != 0)
    fprintf(f, " --determinism %" PRIu64, c->determinism);
  if (given(c, "max-arg-bytes"))
    fprintf(f, " --max-arg-bytes %" PRIu64, c->load.max_arg_bytes);
  if (given(c, "max-nodes"))
    fprintf(f, " --max-nodes %zu", c->load.max_nodes);
  if (given(c, "max-file-bytes"))
    fprintf(f, " --max-file-bytes %" PRIu64, c->load.max_file_bytes);
  if (c->isolate)
    fputs(" --isolate", f);
  if (c->guard_pages)
    fputs(" --guard-pages", f);
  if (c->timeout_text != NULL) {
    fputs(" --timeout ", f);
    st__shell_quote(f, c->timeout_text);
  }
  if (c->golden_platform != NULL) {
    fputs(" --golden-platform ", f);
    st__shell_quote(f, c->golden_platform);
  }
  if (c->no_default_plugins)
    fputs(" --no-default-plugins", f);
  for (i = 0; i < c->plugins.n; i++) {
    fputs(" --plugin ", f);
    st__shell_quote(f, c->plugins.items[i]);
  }
  for (i = 0; i < c->watch.n; i++) {
    fputs(" --watch ", f);
    st__shell_quote(f, c->watch.items[i]);
  }
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static int color_allowed(void) {
  const char *no_color = getenv("NO_COLOR");
  const char *term = getenv("TERM");
  /* https://no-color.org: set to any non-empty value, it disables colour;
   * a dumb terminal cannot show it. */
  if (no_color != NULL && no_color[0] != '\0')
    return 0;
  return term == NULL || strcmp(term, "dumb") != 0;
}

/* docs/cli.md: every file the run reads (scene paths, the scenes of its
 * directories when set is not NULL, plugins, the --rerun-failed report),
 * by device and inode. 0 or the exit status of an internal error. */
static int collect_inputs(const cli *c, const st_scene_set *set,
                          st__inputs *in) {
  size_t i, n = set != NULL ? st_scene_set_count(set) : 0;
  int bad = 0;
  for (i = 0; i < c->paths.n; i++)
    bad |= st__inputs_add(in, "input", c->paths.items[i]);
  for (i = 0; i < c->plugins.n; i++)
    bad |= st__inputs_add(in, "--plugin", c->plugins.items[i]);
  if (c->rerun_failed != NULL)
    bad |= st__inputs_add(in, "--rerun-failed report", c->rerun_failed);
  if (c->shard_by != NULL)
    bad |= st__inputs_add(in, "--shard-by report", c->shard_by);
  for (i = 0; i < n; i++)
    bad |= st__inputs_add(in, "scene file",
                          st_scene_file(st_scene_set_get(set, i)));
  return bad ? internal_error("listing the inputs", ST_ENOMEM) : 0;
}

/* 2 with a usage error when the output path (opt names it) is one of
 * the inputs: refused before it is opened, so nothing is truncated. */
static int refuse_input(const st__inputs *in, const char *opt,
                        const char *path) {
  const st__input *hit = path != NULL ? st__inputs_named_by(in, path) : NULL;
  if (hit == NULL)
    return 0;
  if (hit->is_dir)
    return st__cli_usage("%s '%s' is a scene file of the input directory "
                         "'%s'; refusing to overwrite it",
                         opt, path, hit->path);
  return st__cli_usage("%s '%s' is also the %s '%s'; refusing to overwrite "
                       "it",
                       opt, path, hit->what, hit->path);
}

/* The run's reports (SPEC §10): the --format one to --output or standard
 * output, each --report, and those the environment asks for, checked
 * against each other and against --events and the input scenes. */
static int plan_outputs(const cli *c, const st_scene_set *set, st__output *out,
                        size_t *n) {
  st__reserved *res;
  size_t i, n_res = 0, n_scenes = st_scene_set_count(set);
  int fmt = c->format, status;

  *n = 0;
  /* Default: text on a terminal, TAP otherwise (SPEC §6). */
  if (fmt < 0)
    fmt = c->output == NULL && isatty(1) ? ST__FMT_TEXT : ST__FMT_TAP;
  memset(&out[0], 0, sizeof out[0]);
  out[0].fmt = fmt;
  out[0].path = c->output;
  out[0].source = "--output";
  *n = 1;
  for (i = 0; i < c->reports.n; i++) {
    const char *spec = c->reports.items[i], *colon = strchr(spec, ':');
    char name[16];
    st__output *o = &out[(*n)++];
    memset(o, 0, sizeof *o);
    /* parse_report checked the form already. */
    snprintf(name, sizeof name, "%.*s", (int)(colon - spec), spec);
    o->fmt = st__fmt_parse(name);
    o->path = colon + 1;
    o->source = "--report";
  }
  if ((status = st__outputs_from_env(out, n)) != 0)
    return status;
  res = calloc(c->paths.n + n_scenes + 2, sizeof *res);
  if (res == NULL)
    return internal_error("planning the reports", ST_ENOMEM);
  if (c->events != NULL) {
    res[n_res].what = "--events file";
    res[n_res++].path = c->events;
  }
  if (c->log_file != NULL) {
    res[n_res].what = "--log-file";
    res[n_res++].path = c->log_file;
  }
  for (i = 0; i < c->paths.n; i++) {
    res[n_res].what = "input";
    res[n_res++].path = c->paths.items[i];
  }
  for (i = 0; i < n_scenes; i++) {
    res[n_res].what = "scene file";
    res[n_res++].path = st_scene_file(st_scene_set_get(set, i));
  }
  status = st__outputs_check(out, n, res, n_res);
  free(res);
  if (status == 0) {
    st__inputs in = {NULL, 0, 0};
    status = collect_inputs(c, set, &in);
    for (i = 0; i < *n && status == 0; i++)
      status = refuse_input(&in, out[i].source, out[i].path);
    if (status == 0)
      status = refuse_input(&in, "--events", c->events);
    st__inputs_free(&in);
  }
  return status;
}

/* A run that selected nothing still leaves complete reports: a TAP plan
 * that says so, and JUnit and JSON documents with zero cases and the
 * run's metadata (its shard). The text report says nothing; the "no
 * cases selected" line went to stderr. */
static int report_empty(st__output *out, size_t n, const st_run_options *opts) {
  st_run_result *empty = st__run_result_new(0);
  st_run_info info;
  size_t i;

  if (empty == NULL)
    return internal_error("reporting an empty run", ST_ENOMEM);
  memset(&info, 0, sizeof info);
  info.platform = opts->platform;
  info.seed = opts->seed;
  info.repeat = opts->repeat > 1 ? opts->repeat : 1;
  if (opts->shard_total > 1) {
    info.shard_index = opts->shard_index;
    info.shard_total = opts->shard_total;
  }
  info.shuffle = opts->shuffle;
  info.shuffle_seed = opts->shuffle_seed;
  for (i = 0; i < n; i++) {
    if (out[i].fmt == ST__FMT_TAP) {
      st__report_tap_empty(out[i].f, "no cases selected");
    } else if (out[i].fmt != ST__FMT_TEXT) {
      out[i].obs.run_begin(out[i].obs.data, &info);
      out[i].obs.run_end(out[i].obs.data, empty);
    }
  }
  st_run_result_free(empty);
  return EXIT_PASS;
}

/* Under a TAP report, each case that did not pass is also logged on
 * stderr ("[ERROR] S::C: fail: MESSAGE"): meson's TAP reader keeps the
 * YAML diagnostics out of its console, and `meson test
 * --print-errorlogs` shows a test's stderr, so the reason reaches the
 * user there. */
static void log_failure(void *data, const st_case_info *info,
                        const st_case_result *res) {
  st_case_status s = st_case_result_status(res);
  const char *msg = st_case_result_message(res);
  const st_run_options *opts = data;
  char *id;
  if (s != ST_CASE_FAIL && s != ST_CASE_ERROR && s != ST_CASE_XPASS)
    return;
  id = st__report_case_id(info->scene, info->name, info->iteration,
                          opts->repeat, 0);
  st_log(ST_LOG_ERROR, "%s: %s: %s", id != NULL ? id : info->name,
         st_case_status_name(s), msg != NULL ? msg : "(no message)");
  free(id);
}

/* --no-supervise: a kernel that calls exit() ends this process from
 * inside a case. The guard turns that exit, whatever its status, into an
 * internal error (D1: never exit 0 with a truncated report). It cannot
 * catch _exit() or a crash: the supervised run can. */
static pid_t guarded_pid;

static void exit_guard(void) {
  static const char msg[] =
      "scenetest: error: the process exited during a case (a kernel "
      "called exit()?); the report is incomplete\n";
  if (guarded_pid != 0 && guarded_pid == getpid()) {
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(EXIT_INTERNAL);
  }
}

static void exit_guard_arm(void) {
  static int registered;
  if (!registered && atexit(exit_guard) == 0)
    registered = 1;
  guarded_pid = getpid();
}

static void exit_guard_disarm(void) { guarded_pid = 0; }

/* The exit status of a run that ran: 128 + the signal that interrupted
 * it (SPEC §9), else 1 unless every selected case has a result that
 * passed, was skipped or failed as expected (st_run has checked the
 * results against the selection), else 0. */
static int run_status(const st_run_result *result) {
  if (st_run_result_interrupted(result))
    return 128 + st_run_result_interrupted(result);
  return st_run_result_exit_code(result) != 0 ? EXIT_FAILED : EXIT_PASS;
}

static const char *cache_dir(const cli *c) {
  return c->cache_dir != NULL ? c->cache_dir : ".scenetest-cache";
}

/* --last-failed and --failed-first (docs/cli.md#last-failed): the state
 * read (a run reads it to update it even without them), and for --lf the
 * selection narrowed to its cases, unless it names none of the selected
 * ones. 0 or an exit status. */
static int apply_last_failed(cli *c, const st_scene_set *set,
                             st_run_options *opts) {
  st_case_ref *refs = NULL;
  st_error err;
  size_t n = 0, i, hits = 0;
  const char *why = NULL;
  int rc;

  if (c->no_cache && (c->last_failed || c->failed_first))
    return st__cli_usage("--no-cache leaves no state for %s",
                         c->last_failed ? "--last-failed" : "--failed-first");
  if (c->last_failed && c->rerun_failed != NULL)
    return st__cli_usage("--last-failed and --rerun-failed both choose the "
                         "cases; give one");
  if (c->no_cache)
    return 0;
  rc = st__lastfailed_read(cache_dir(c), &c->lf_names, &c->n_lf_names);
  if (rc == -2)
    return EXIT_INTERNAL;
  if (c->failed_first && c->n_lf_names > 0) {
    opts->first_cases = (const char *const *)c->lf_names;
    opts->n_first_cases = c->n_lf_names;
  }
  if (!c->last_failed)
    return 0;
  if (rc == 0)
    why = "no last-failed state";
  else if (rc < 0)
    why = "the last-failed state is unusable";
  else if (c->n_lf_names == 0)
    why = "no failed cases recorded";
  if (why == NULL) {
    st_error_clear(&err);
    if (st_select_cases(set, opts, &refs, &n, &err) != ST_OK)
      return report_error(&err, ST_EUSAGE);
    for (i = 0; i < n; i++) {
      const char *sn = st_scene_name(refs[i].scene);
      const char *cn = st_scene_case_name(refs[i].scene, refs[i].index);
      for (size_t k = 0; k < c->n_lf_names; k++) {
        const char *name = c->lf_names[k];
        size_t sl = strlen(sn);
        if (strncmp(name, sn, sl) == 0 && strncmp(name + sl, "::", 2) == 0 &&
            strcmp(name + sl + 2, cn) == 0) {
          hits++;
          break;
        }
      }
    }
    free(refs);
    if (hits == 0)
      why = "none of the recorded failed cases is selected";
  }
  if (why != NULL) {
    fprintf(stderr,
            "scenetest: --last-failed: %s in %s; running every "
            "selected case\n",
            why, cache_dir(c));
    return 0;
  }
  fprintf(stderr,
          "scenetest: --last-failed: running the %zu selected "
          "case%s that failed last time\n",
          hits, hits == 1 ? "" : "s");
  opts->use_only_cases = 1;
  opts->only_cases = (const char *const *)c->lf_names;
  opts->n_only_cases = c->n_lf_names;
  return 0;
}

/* `scenetest run`: select, open every output, build the reporters, run,
 * close the outputs. Long because: it is the run's setup and teardown in
 * order with one cleanup path at the end, and each step shares most of
 * the locals (outputs, observers, the report config) with the next. */
static int cmd_run(const cli *c, const st_scene_set *set,
                   st_run_options *opts) {
  st_case_ref *refs = NULL;
  size_t n = 0, n_out = 0, i, n_obs = 0;
  st__output *out = calloc(c->reports.n + 3, sizeof *out);
  st_observer *obs = calloc(c->reports.n + 5, sizeof *obs);
  st_observer events_obs;
  int has_events = 0, close_status;
  FILE *events = NULL;
  char *rerun = NULL;
  st__report_config cfg, ecfg;
  st_run_result *result = NULL;
  st_error err;
  st_status rc;
  int status;

  if (out == NULL || obs == NULL) {
    free(out);
    free(obs);
    return internal_error("planning the reports", ST_ENOMEM);
  }
  status = select_cases(c, set, opts, &refs, &n);
  free(refs);
  if (status > 0 || (status == 0 && c->require_cases))
    goto out;
  /* From here status is what went wrong, n what was selected. */
  status = 0;
  if ((status = plan_outputs(c, set, out, &n_out)) != 0)
    goto out;
  /* Opened (and so truncated) even when nothing runs, like the report: a
   * CI step that reads it finds zero cases, not a missing or stale file. */
  if (c->events != NULL) {
    events = fopen(c->events, "we");
    if (events == NULL) {
      status = st__cli_usage("cannot open --events '%s': %s", c->events,
                             strerror(errno));
      goto out;
    }
    st__proc_parent_only(fileno(events));
  }
  if ((rerun = rerun_options(c)) == NULL) {
    status = internal_error("building the rerun command", ST_ENOMEM);
    goto out;
  }
  memset(&cfg, 0, sizeof cfg);
  /* --color: always is 2, colour even off a terminal (outputs.c). */
  cfg.color = c->color_mode == 1 ? 2 : c->color_mode == 2 ? 0 : color_allowed();
  cfg.verbosity = c->quiet ? -1 : c->verbose;
  if (c->verbose)
    opts->keep_record = 1; /* the phase times -v prints */
  cfg.rerun_opts = rerun;
  cfg.argv0 = c->argv0;
  cfg.argc = c->argc;
  cfg.argv = c->argv;
  cfg.shard_source = c->shard.source;
  cfg.junit_xunit1 = c->junit_family == 1;
  cfg.golden_platform = c->golden_platform;
  cfg.scenes = set;
  cfg.durations = (unsigned)c->slowest;
  {
    int st = st__outputs_open(out, n_out, &cfg);
    if (st != 0) {
      status = st;
      goto out;
    }
  }
  if (n == 0) {
    status = report_empty(out, n_out, opts);
    goto out;
  }
  for (i = 0; i < n_out; i++) {
    obs[n_obs++] = out[i].obs;
    if (out[i].fmt == ST__FMT_JUNIT || out[i].fmt == ST__FMT_JSON ||
        out[i].fmt == ST__FMT_HTML)
      opts->keep_record = 1;
  }
  if (out[0].fmt == ST__FMT_TAP) {
    st_observer_init(&obs[n_obs]);
    obs[n_obs].data = opts;
    obs[n_obs++].case_end = log_failure;
  }
  if (events != NULL) {
    memset(&ecfg, 0, sizeof ecfg);
    ecfg.out = events;
    if ((rc = st__report_events_new(&ecfg, &events_obs)) != ST_OK) {
      status = internal_error("creating the events writer", rc);
      goto out;
    }
    has_events = 1;
    obs[n_obs++] = events_obs;
  }

  opts->redirect_stdout = 1;
  /* Someone watches (a progress line, log lines on a terminal): the
   * supervised children tell each case as it begins, not in batches. */
  opts->live = isatty(1) || isatty(2);
  opts->interrupts = 1;
  st_error_clear(&err);
  if (!opts->supervise)
    exit_guard_arm();
  rc = st_run(set, opts, obs, n_obs, &result, &err);
  exit_guard_disarm();
  if (rc != ST_OK) {
    status = report_error(&err, rc);
    goto out;
  }
  st__cli_warn_skipped(result);
  status = run_status(result);
  if (!c->no_cache)
    (void)st__lastfailed_write(cache_dir(c), c->lf_names, c->n_lf_names,
                               result);

out:
  if (has_events)
    st__report_events_free(&events_obs);
  st_run_result_free(result);
  free(rerun);
  if (events != NULL) {
    int bad = ferror(events) != 0;
    st__proc_parent_only_end(fileno(events));
    if (fclose(events) != 0)
      bad = 1;
    if (bad) {
      fprintf(stderr, "scenetest: error: writing --events '%s' failed\n",
              c->events);
      status = EXIT_INTERNAL;
    }
  }
  close_status = st__outputs_close(out, n_out);
  if (close_status != 0)
    status = close_status;
  free(out);
  free(obs);
  return status;
}

static int run_command(cli *c) {
  st_scene_set *set = NULL;
  st_registry *reg = NULL;
  st_run_options opts;
  st_status rc;
  int status;

  if (c->paths.n == 0)
    return st__cli_usage("'%s' needs at least one PATH (a scene file or a "
                         "directory)",
                         c->cmd_name);
  if ((rc = st_registry_new_builtin(&reg)) != ST_OK)
    return internal_error("creating the registry", rc);
  /* Plugins first: they may provide the platform. A plugin that cannot be
   * loaded is a usage error; one whose init fails is a warning. A run that
   * forks its cases (supervised, --isolate) loads none here: the
   * processes that dispatch do (SPEC §9; cli/probe.c). */
  if ((status = st__cli_load_plugins(
           reg, c->plugins.items, c->plugins.n,
           c->cmd == CMD_RUN && (!c->no_supervise || c->isolate))) != 0)
    goto out;
  /* After the explicit ones, which hide their platforms' defaults. */
  if (!c->no_default_plugins)
    declare_default_plugins(reg);
  if (c->cmd != CMD_CHECK && (status = check_platform(c, reg)) != 0)
    goto out;
  if ((status = load_all(c, reg, &set)) != 0)
    goto out;
  warn_unknown_names(c, set);
  if (c->cmd != CMD_CHECK &&
      (status = st__filter_new(set, c->tag_expr, c->k_expr, c->skips.items,
                               c->skips.n, &c->filter)) != 0)
    goto out;
  options_from_cli(c, &opts);
  opts.registry = reg;
  if (c->cmd != CMD_CHECK &&
      (c->cmd == CMD_RUN || c->last_failed || c->failed_first) &&
      (status = apply_last_failed(c, set, &opts)) != 0)
    goto out;
  if ((status = shard_by_durations(c, set, &opts)) != 0)
    goto out;
  switch (c->cmd) {
  case CMD_CHECK:
    status = cmd_check(c, set);
    break;
  case CMD_LIST:
    status = cmd_list(c, set, &opts);
    break;
  default:
    if (c->bench != NULL) {
      /* docs/bench.md: in this process, one case at a time. */
      opts.supervise = 0;
      opts.isolate = 0;
      opts.jobs = 1;
      opts.skip_golden |= c->bench->no_check;
      status = st__cli_bench_run(c->bench, set, &opts, reg);
    } else {
      status = cmd_run(c, set, &opts);
    }
    break;
  }
out:
  st__filter_free(c->filter);
  c->filter = NULL;
  st_scene_set_free(set);
  st_registry_free(reg);
  if ((fflush(stdout) != 0 || ferror(stdout)) && status == EXIT_PASS) {
    fprintf(stderr,
            "scenetest: error: writing to standard output failed: "
            "%s\n",
            strerror(errno));
    status = EXIT_INTERNAL;
  }
  return status;
}

/* SCENETEST_LOG_LEVEL: the default of --log-level (SPEC §11). */
static int level_from_env(void) {
  const char *v = getenv("SCENETEST_LOG_LEVEL");
  int level;
  if (v == NULL || v[0] == '\0')
    return 0;
  if (st_log_level_parse(v, &level) != ST_OK)
    return st__cli_usage("SCENETEST_LOG_LEVEL: unknown level '%s'; levels: "
                         "debug, info, timing, warning, error, null",
                         v);
  st_log_set_level(level);
  return 0;
}

static int log_fd = -1;

/* --log-file: the whole log at --log-level to FILE, from the first line
 * (plugin warnings included). O_APPEND: isolated children write their own
 * lines to the same open file, one write(2) each. */
static int open_log_file(const cli *c) {
  struct stat a, b;
  const char *other[2];
  size_t i;

  if (c->log_file == NULL)
    return 0;
  other[0] = c->output;
  other[1] = c->events;
  for (i = 0; i < 2; i++)
    if (other[i] != NULL &&
        (strcmp(other[i], c->log_file) == 0 ||
         (stat(other[i], &a) == 0 && stat(c->log_file, &b) == 0 &&
          a.st_dev == b.st_dev && a.st_ino == b.st_ino)))
      return st__cli_usage("--log-file '%s' is also the %s", c->log_file,
                           i == 0 ? "--output" : "--events file");
  {
    /* The scenes of input directories are known once loaded, later than
     * the log opens: a .yaml or .yml file below one is refused here. */
    st__inputs in = {NULL, 0, 0};
    int st = collect_inputs(c, NULL, &in);
    if (st == 0)
      st = refuse_input(&in, "--log-file", c->log_file);
    st__inputs_free(&in);
    if (st != 0)
      return st;
  }
  log_fd = open(c->log_file,
                O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
  if (log_fd < 0)
    return st__cli_usage("cannot open --log-file '%s': %s", c->log_file,
                         strerror(errno));
  st__log_set_file(log_fd);
  return 0;
}

/* docs/cli.md: a write that failed (a full disk), in this process or a
 * child, is exit 3 with the reason: the log is torn. */
static int close_log_file(const cli *c, int status) {
  int err;
  if (log_fd < 0)
    return status;
  st__log_set_file(-1);
  err = st__log_file_error();
  if (close(log_fd) != 0 && err == 0)
    err = errno;
  if (err != 0) {
    (void)st__cli_usage("writing --log-file '%s' failed: %s", c->log_file,
                        strerror(err));
    status = EXIT_INTERNAL;
  }
  log_fd = -1;
  return status;
}

/* Precedence (docs/cli.md#configuration-file): the configuration file,
 * then the environment, then the command line, each over the one before;
 * the file's paths when the command line gives none. 0 or an exit
 * status. */
static int gather_options(cli *c, int argc, char **argv) {
  const char *env = getenv("SCENETEST_LOG_LEVEL");
  int status;
  if ((status = load_config(c, argc, argv)) != 0 ||
      (status = level_from_env()) != 0)
    return status;
  if (env != NULL && env[0] != '\0') {
    int li = option_index("log-level");
    c->source[li] = SRC_ENV;
    c->raw[li] = env;
  }
  if ((status = parse_args(c, argc, argv)) != 0)
    return status;
  if (c->paths.n == 0 && c->config_paths.n > 0) {
    for (size_t i = 0; i < c->config_paths.n; i++)
      c->paths.items[c->paths.n++] = c->config_paths.items[i];
    c->paths_from_config = 1;
  }
  if (c->verbose && c->quiet)
    return st__cli_usage("-v and -q cannot be used together");
  return 0;
}

/* The terminal rule (docs/cli.md): with stderr a terminal, TIMING lines
 * stay off it unless a level of timing or lower was set (flag,
 * SCENETEST_LOG_LEVEL or the configuration file); the --log-file still
 * gets them. */
static void hold_timing_lines(const cli *c) {
  int explicit = c->source[option_index("log-level")] != SRC_DEFAULT;
  if (!isatty(st__log_fd()))
    return;
  if (explicit && st_log_get_level() <= ST_LOG_TIMING)
    return;
  st__log_set_terminal_floor(ST_LOG_WARNING);
}

/* The run's last line when the terminal rule held lines back. */
static void say_held_lines(void) {
  unsigned long n = st__log_held_count();
  if (n == 0)
    return;
  fflush(stdout);
  fprintf(stderr,
          "scenetest: %lu TIMING line%s held back from the terminal; "
          "--log-level timing shows them, --log-file FILE keeps them\n",
          n, n == 1 ? "" : "s");
}

static int has_flag(int argc, char **argv, const char *l, const char *s) {
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      return 0;
    if (strcmp(argv[i], l) == 0 || (s != NULL && strcmp(argv[i], s) == 0))
      return 1;
  }
  return 0;
}

/* fd 0, 1 and 2 open before anything else opens a file (D5): started
 * with one closed (`2>&-`), the first file opened would become it, and
 * log lines or a kernel's output would land in a report or the --events
 * file. A closed one becomes /dev/null. */
static int sane_std_fds(void) {
  int fd;
  for (fd = 0; fd <= 2; fd++) {
    int got;
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
      continue;
    got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got != fd) {
      if (got >= 0)
        close(got);
      return -1;
    }
  }
  return 0;
}

/* `bench`: `run`'s command line, less bench's own options (cli/bench.h),
 * in *rest (owned by the caller). */
static int bench_args(int *argc, char ***argv, st__cli_bench *b, char ***rest) {
  int status;
  if ((*rest = calloc((size_t)*argc + 1, sizeof **rest)) == NULL)
    return internal_error("parsing the command line", ST_ENOMEM);
  if ((status = st__cli_bench_args(*argc, *argv, b, *rest, argc)) != 0) {
    free(*rest);
    *rest = NULL;
    return status;
  }
  *argv = *rest;
  return 0;
}

/* The commands and flags that need no scene command line: timing,
 * compare and merge (their own), --help and --version (wherever they
 * are, as with GNU tools), and no command at all. Returns 1 with *status
 * set when one of them decided the run. */
static int early_command(int argc, char **argv, int *status) {
  /* timing and compare read logs, not scenes: their own command line. */
  if (argc >= 2 &&
      (strcmp(argv[1], "timing") == 0 || strcmp(argv[1], "compare") == 0)) {
    *status = st__cli_measure_main(argc, argv);
    return 1;
  }
  /* merge reads reports, not scenes (docs/cli.md#merge). */
  if (argc >= 2 && strcmp(argv[1], "merge") == 0 &&
      !has_flag(argc, argv, "--help", "-h")) {
    *status = st__cli_merge_main(argc, argv);
    return 1;
  }
  if (has_flag(argc, argv, "--help", "-h")) {
    fputs(usage_text, stdout);
    *status = fflush(stdout) == 0 ? EXIT_PASS : EXIT_INTERNAL;
    return 1;
  }
  if (has_flag(argc, argv, "--version", NULL)) {
    printf("scenetest %s\n", st_version_string());
    *status = fflush(stdout) == 0 ? EXIT_PASS : EXIT_INTERNAL;
    return 1;
  }
  if (argc < 2) {
    *status = st__cli_usage("no command given; commands: run, list, check "
                            "(see 'scenetest --help')");
    return 1;
  }
  return 0;
}

/* The defaults a command line starts from. */
static void cli_defaults(cli *c, const char *cmd, int argc, char **argv) {
  c->cmd_name = cmd;
  c->argv0 = argv[0];
  c->argc = argc;
  c->argv = argv;
  c->platform = "cpu";
  c->format = -1;
  c->manual = ST_MANUAL_EXCLUDE;
  st_load_options_init(&c->load);
  c->max_arg_bytes = c->load.max_arg_bytes;
  c->max_nodes = c->load.max_nodes;
  c->max_file_bytes = c->load.max_file_bytes;
}

int main(int argc, char **argv) {
  cli c;
  const char *cmd;
  int status;
  size_t cap = (argc > 0 ? (size_t)argc : 1) + CONFIG_VALUES_MAX, i;
  st__cli_bench bench;
  char **bench_argv = NULL;
  strlist *lists[] = {&c.paths,  &c.selectors, &c.watch,        &c.plugins,
                      &c.ignore, &c.reports,   &c.config_paths, &c.skips};

  if (sane_std_fds() != 0)
    return EXIT_INTERNAL;
  if (early_command(argc, argv, &status))
    return status;

  st__args_tune_allocator();
  memset(&c, 0, sizeof c);
  cmd = argv[1];
  if (strcmp(cmd, "bench") == 0) {
    if ((status = bench_args(&argc, &argv, &bench, &bench_argv)) != 0)
      return status;
    c.bench = &bench;
    c.cmd = CMD_RUN;
  } else if (strcmp(cmd, "run") == 0)
    c.cmd = CMD_RUN;
  else if (strcmp(cmd, "list") == 0)
    c.cmd = CMD_LIST;
  else if (strcmp(cmd, "check") == 0)
    c.cmd = CMD_CHECK;
  else if (cmd[0] == '-')
    return st__cli_usage("the command comes first: scenetest run|list|check "
                         "[OPTIONS] PATH... (got '%s')",
                         cmd);
  else
    return st__cli_usage("unknown command '%s'; commands: run, bench, list, "
                         "check, timing, compare, merge",
                         cmd);
  cli_defaults(&c, cmd, argc, argv);
  /* Every list has room for all of argv. */
  for (i = 0; i < sizeof lists / sizeof lists[0]; i++)
    if ((lists[i]->items = calloc(cap, sizeof *lists[i]->items)) == NULL) {
      status = internal_error("parsing the command line", ST_ENOMEM);
      goto out;
    }
  if ((status = gather_options(&c, argc, argv)) != 0 ||
      (status = settle_options(&c)) != 0)
    goto out;
  if (c.show_config) {
    status = show_config(&c);
    goto out;
  }
  if (c.bench != NULL) {
    /* docs/bench.md: -j 1, cases in this process. */
    c.no_supervise = 1;
    c.isolate = 0;
    c.jobs = 1;
  }
  hold_timing_lines(&c);
  if ((status = open_log_file(&c)) != 0)
    goto out;
  c.load.max_arg_bytes = c.max_arg_bytes;
  c.load.max_nodes = (size_t)c.max_nodes;
  c.load.max_file_bytes = c.max_file_bytes;
  status = run_command(&c);
  status = close_log_file(&c, status);
  say_held_lines();
out:
  st__cli_config_free(&c.config);
  for (i = 0; i < sizeof lists / sizeof lists[0]; i++)
    free(lists[i]->items);
  st__names_free(c.rerun_names, c.n_rerun_names);
  st__names_free(c.shard_names, c.n_shard_names);
  st__durations_free(&c.durations);
  st__names_free(c.lf_names, c.n_lf_names);
  free(bench_argv);
  return status;
}
