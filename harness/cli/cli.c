/* SPDX-License-Identifier: MIT */
/* The scenetest command: `run`, `list` and `check` (SPEC §6). It parses the
 * command line, loads the scenes, selects cases, wires the reporters to the
 * run as observers, and maps outcomes to the exit status: 0 all selected
 * cases passed or were skipped, 1 a case failed, 2 usage, load or
 * validation error (nothing ran), 3 internal error. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "base/log_sink.h"
#include "case/args.h"
#include "cli/cli_measure.h"
#include "ops/validate.h"
#include "report/report.h"

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

enum { CMD_RUN = 1, CMD_LIST = 2, CMD_CHECK = 4 };
#define CMD_ALL (CMD_RUN | CMD_LIST | CMD_CHECK)
#define CMD_SELECT (CMD_RUN | CMD_LIST)

typedef enum opt_id {
  OPT_HELP,
  OPT_VERSION,
  OPT_PLATFORM,
  OPT_CASE,
  OPT_MANUAL,
  OPT_ROUNDS,
  OPT_SKIP_GOLDEN,
  OPT_SEED,
  OPT_JOBS,
  OPT_GOLDEN_THREADS,
  OPT_FAIL_FAST,
  OPT_FORMAT,
  OPT_OUTPUT,
  OPT_EVENTS,
  OPT_LOG_LEVEL,
  OPT_LOG_FILE,
  OPT_MAX_ARG_BYTES,
  OPT_MAX_NODES,
  OPT_REQUIRE_CASES,
  OPT_STRICT_RECORD,
  OPT_STRICT_PLATFORMS,
  OPT_IGNORE,
  OPT_DUMP_ON_FAIL,
  OPT_WATCH,
  OPT_PLUGIN,
  OPT_ISOLATE,
  OPT_TIMEOUT,
  OPT_LATER /* in SPEC §6 but not built yet */
} opt_id;

typedef struct optdef {
  const char *name; /* long name without "--" */
  char short_name;  /* 0: none */
  int has_arg;
  int cmds; /* commands that take it */
  opt_id id;
} optdef;

static const optdef options[] = {
    {"help", 'h', 0, CMD_ALL, OPT_HELP},
    {"version", 0, 0, CMD_ALL, OPT_VERSION},
    {"platform", 0, 1, CMD_SELECT, OPT_PLATFORM},
    {"case", 0, 1, CMD_SELECT, OPT_CASE},
    {"manual", 0, 1, CMD_SELECT, OPT_MANUAL},
    {"rounds", 0, 1, CMD_RUN, OPT_ROUNDS},
    {"skip-golden", 0, 0, CMD_RUN, OPT_SKIP_GOLDEN},
    {"seed", 0, 1, CMD_RUN, OPT_SEED},
    {"jobs", 'j', 1, CMD_RUN, OPT_JOBS},
    {"golden-threads", 0, 1, CMD_RUN, OPT_GOLDEN_THREADS},
    {"fail-fast", 0, 0, CMD_RUN, OPT_FAIL_FAST},
    {"format", 0, 1, CMD_RUN, OPT_FORMAT},
    {"output", 0, 1, CMD_RUN, OPT_OUTPUT},
    {"events", 0, 1, CMD_RUN, OPT_EVENTS},
    {"log-level", 0, 1, CMD_ALL, OPT_LOG_LEVEL},
    {"log-file", 0, 1, CMD_RUN, OPT_LOG_FILE},
    {"max-arg-bytes", 0, 1, CMD_ALL, OPT_MAX_ARG_BYTES},
    {"max-nodes", 0, 1, CMD_ALL, OPT_MAX_NODES},
    {"require-cases", 0, 0, CMD_SELECT, OPT_REQUIRE_CASES},
    {"strict-record", 0, 0, CMD_RUN, OPT_STRICT_RECORD},
    {"watch", 0, 1, CMD_RUN, OPT_WATCH},
    {"plugin", 0, 1, CMD_ALL, OPT_PLUGIN},
    {"strict-platforms", 0, 0, CMD_ALL, OPT_STRICT_PLATFORMS},
    {"ignore", 0, 1, CMD_ALL, OPT_IGNORE},
    {"dump-on-fail", 0, 1, CMD_RUN, OPT_DUMP_ON_FAIL},
    /* Later issues (SPEC §9): recognised so that the error says "not
     * implemented yet" rather than "unknown option". */
    {"isolate", 0, 0, CMD_RUN, OPT_ISOLATE},
    {"timeout", 0, 1, CMD_RUN, OPT_TIMEOUT},
    {"shard", 0, 1, CMD_RUN, OPT_LATER},
    {"repeat", 0, 1, CMD_RUN, OPT_LATER},
    {"shuffle", 0, 0, CMD_RUN, OPT_LATER},
};

static const char usage_text[] =
    "usage: scenetest run [OPTIONS] PATH...    run scenes (files, or "
    "directories\n"
    "                                          searched for *.yaml / *.yml)\n"
    "       scenetest list [OPTIONS] PATH...   print the selected cases, one\n"
    "                                          \"scene::case\" a line\n"
    "       scenetest check [OPTIONS] PATH...  load and validate only\n"
    "       scenetest timing [OPTIONS] LOG...  summarise TIMING logs\n"
    "       scenetest compare [OPTIONS] BASE NEW  compare two sides' timings\n"
    "       scenetest --version | --help\n"
    "\n"
    "Selection (run, list):\n"
    "  --platform P          platform to run on (default cpu)\n"
    "  --case SEL            select cases: scene, scene::case, ::case; shell\n"
    "                        globs allowed; repeatable; a selector that\n"
    "                        selects nothing is an error\n"
    "  --manual MODE         exclude|include|only manual cases (default "
    "exclude)\n"
    "  --require-cases       exit 2 when nothing is selected (default: exit "
    "0)\n"
    "\n"
    "Running (run):\n"
    "  --rounds N            rounds per case, N >= 1 (default: the case's, "
    "else 1)\n"
    "  --skip-golden         skip the golden computation and compare\n"
    "  --seed N              seed of the random inits (default 0)\n"
    "  -j, --jobs N          cases in parallel (default 1)\n"
    "  --golden-threads N    threads of the reference backend\n"
    "                        (default min(8, cores))\n"
    "  --fail-fast           stop after the first failing case (the rest are\n"
    "                        reported as skipped)\n"
    "  --isolate             run each case in a forked child\n"
    "  --timeout SECONDS     kill a case after SECONDS (level 2: isolated)\n"
    "  --strict-record       a stale autoload record is an error\n"
    "  --watch NAME=GLOB,... watch more modules in the autoload record\n"
    "\n"
    "Output (run):\n"
    "  --format F            text|tap (default: text on a terminal, else "
    "tap)\n"
    "  --output FILE         write the report to FILE instead of stdout\n"
    "  --events FILE         write every case's events to FILE as JSON Lines\n"
    "  --log-file FILE       the whole log to FILE; stderr keeps warnings and\n"
    "                        errors\n"
    "  --dump-on-fail DIR    write a failing compare's tensors as .npy files\n"
    "                        under DIR/SCENE/CASE/\n"
    "\n"
    "Loading (run, list, check):\n"
    "  --max-arg-bytes N     cap on one case's tensor bytes (default 2G);\n"
    "                        N may end in K, M, G or T (powers of 1024)\n"
    "  --max-nodes N         YAML node budget per file (default 1000000)\n"
    "  --plugin [lazy:]PATH  load a backend plugin (lazy: on first use)\n"
    "  --strict-platforms    an unknown platform in a scene is an error (as\n"
    "                        in check), not a warning\n"
    "  --ignore GLOB         skip matching paths in directory scans\n"
    "                        (repeatable; also .scenetestignore)\n"
    "\n"
    "General:\n"
    "  --log-level LEVEL     debug|info|timing|warning|error|null (default "
    "timing,\n"
    "                        or $SCENETEST_LOG_LEVEL)\n"
    "  --version             print the version and exit\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Exit status: 0 all selected cases passed or were skipped; 1 a case "
    "failed;\n"
    "2 usage, load or validation error (nothing ran); 3 internal error.\n"
    "Options may come before or after the paths; \"--\" ends the options.\n";

typedef struct cli {
  int cmd;
  const char *cmd_name;
  const char **paths; /* into argv */
  size_t n_paths;
  const char **selectors;
  size_t n_selectors;
  const char **watch;
  size_t n_watch;
  const char **plugins;
  size_t n_plugins;
  const char **ignore; /* --ignore */
  size_t n_ignore;
  int strict_platforms;
  const char *dump_dir; /* --dump-on-fail */
  int isolate;
  double timeout;
  const char *platform;
  st_manual_mode manual;
  int manual_given;
  unsigned rounds;
  int skip_golden;
  uint64_t seed;
  unsigned jobs;
  unsigned golden_threads;
  int fail_fast;
  int strict_record;
  int require_cases;
  const char *format; /* NULL: by terminal */
  const char *output;
  const char *events;
  const char *log_file; /* --log-file */
  st_load_options load;
  int max_arg_bytes_given;
  int max_nodes_given;
  const char *timeout_text; /* as given, for the rerun command */
} cli;

/* One line "scenetest: error: MESSAGE" on stderr (SPEC §6). */
static int usage_error(const char *fmt, ...) ST_PRINTF(1, 2);
static int usage_error(const char *fmt, ...) {
  va_list ap;
  fputs("scenetest: error: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return EXIT_USAGE;
}

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
  return usage_error("%s", msg);
}

/* Parses a decimal integer in [min, max]: digits only (strtoull would
 * accept a sign and wrap "-1" to UINT64_MAX). */
static int parse_uint(const char *opt, const char *text, uint64_t min,
                      uint64_t max, uint64_t *out) {
  char *end;
  unsigned long long v;

  if (text[0] < '0' || text[0] > '9')
    return usage_error("--%s: '%s' is not a non-negative integer", opt, text);
  errno = 0;
  v = strtoull(text, &end, 10);
  if (*end != '\0')
    return usage_error("--%s: '%s' is not a non-negative integer", opt, text);
  if (errno == ERANGE || v > max)
    return usage_error("--%s: %s is too large (at most %" PRIu64 ")", opt, text,
                       max);
  if (v < min)
    return usage_error("--%s must be at least %" PRIu64 " (got %s)", opt, min,
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

static int apply_option(cli *c, const optdef *o, const char *flag,
                        const char *val) {
  uint64_t v;
  int rc, level;

  if (!(o->cmds & c->cmd))
    return usage_error("option '%s' does not apply to '%s'", flag, c->cmd_name);
  switch (o->id) {
  case OPT_HELP:
  case OPT_VERSION:
    break; /* handled before parsing */
  case OPT_PLATFORM:
    if (val[0] == '\0')
      return usage_error("--platform needs a platform name");
    c->platform = val;
    break;
  case OPT_CASE:
    if (val[0] == '\0')
      return usage_error("--case needs a selector (scene, scene::case or "
                         "::case)");
    c->selectors[c->n_selectors++] = val;
    break;
  case OPT_MANUAL:
    if (strcmp(val, "exclude") == 0)
      c->manual = ST_MANUAL_EXCLUDE;
    else if (strcmp(val, "include") == 0)
      c->manual = ST_MANUAL_INCLUDE;
    else if (strcmp(val, "only") == 0)
      c->manual = ST_MANUAL_ONLY;
    else
      return usage_error("--manual must be exclude, include or only (got "
                         "'%s')",
                         val);
    c->manual_given = 1;
    break;
  case OPT_ROUNDS:
    if ((rc = parse_uint("rounds", val, 1, 1000000000u, &v)) != 0)
      return rc;
    c->rounds = (unsigned)v;
    break;
  case OPT_SKIP_GOLDEN:
    c->skip_golden = 1;
    break;
  case OPT_SEED:
    if ((rc = parse_uint("seed", val, 0, UINT64_MAX, &c->seed)) != 0)
      return rc;
    break;
  case OPT_JOBS:
    if ((rc = parse_uint("jobs", val, 1, 4096, &v)) != 0)
      return rc;
    c->jobs = (unsigned)v;
    break;
  case OPT_GOLDEN_THREADS:
    if ((rc = parse_uint("golden-threads", val, 1, 4096, &v)) != 0)
      return rc;
    c->golden_threads = (unsigned)v;
    break;
  case OPT_FAIL_FAST:
    c->fail_fast = 1;
    break;
  case OPT_FORMAT:
    if (strcmp(val, "junit") == 0 || strcmp(val, "json") == 0)
      return usage_error("--format %s is not implemented yet; formats: "
                         "text, tap",
                         val);
    if (strcmp(val, "text") != 0 && strcmp(val, "tap") != 0)
      return usage_error("unknown --format '%s'; formats: text, tap", val);
    c->format = val;
    break;
  case OPT_OUTPUT:
    if (val[0] == '\0')
      return usage_error("--output needs a file name");
    c->output = val;
    break;
  case OPT_EVENTS:
    if (val[0] == '\0')
      return usage_error("--events needs a file name");
    c->events = val;
    break;
  case OPT_LOG_LEVEL:
    if (st_log_level_parse(val, &level) != ST_OK)
      return usage_error("--log-level: unknown level '%s'; levels: debug, "
                         "info, timing, warning, error, null",
                         val);
    st_log_set_level(level);
    break;
  case OPT_LOG_FILE:
    if (val[0] == '\0')
      return usage_error("--log-file needs a file name");
    c->log_file = val;
    break;
  case OPT_MAX_ARG_BYTES:
    if ((rc = parse_bytes("max-arg-bytes", val, &c->load.max_arg_bytes)) != 0)
      return rc;
    c->max_arg_bytes_given = 1;
    break;
  case OPT_MAX_NODES:
    if ((rc = parse_uint("max-nodes", val, 1, SIZE_MAX, &v)) != 0)
      return rc;
    c->load.max_nodes = (size_t)v;
    c->max_nodes_given = 1;
    break;
  case OPT_REQUIRE_CASES:
    c->require_cases = 1;
    break;
  case OPT_STRICT_RECORD:
    c->strict_record = 1;
    break;
  case OPT_WATCH: {
    st_watch *list = NULL;
    size_t n = 0;
    st_error err;
    st_status st;
    st_error_clear(&err);
    /* Validated here so that a bad spec is a usage error before anything
     * loads; the run takes the spec strings themselves. */
    st = st_watch_parse(val, &list, &n, &err);
    st_watch_list_free(list, n);
    /* The library's message already names the option and its value. */
    if (st != ST_OK)
      return err.message[0] ? usage_error("%s", err.message)
                            : usage_error("--watch '%s': %s", val,
                                          st_status_str(st));
    c->watch[c->n_watch++] = val;
    break;
  }
  case OPT_PLUGIN:
    c->plugins[c->n_plugins++] = val;
    break;
  case OPT_STRICT_PLATFORMS:
    c->strict_platforms = 1;
    break;
  case OPT_IGNORE:
    c->ignore[c->n_ignore++] = val;
    break;
  case OPT_DUMP_ON_FAIL:
    c->dump_dir = val;
    break;
  case OPT_ISOLATE:
    c->isolate = 1;
    break;
  case OPT_TIMEOUT: {
    char *end;
    double t;
    errno = 0;
    t = strtod(val, &end);
    if (errno != 0 || end == val || *end != '\0' || !(t > 0) || t > 1e9)
      return usage_error("--timeout must be a positive number of seconds "
                         "(got '%s')",
                         val);
    c->timeout = t;
    c->timeout_text = val;
    break;
  }
  case OPT_LATER:
    return usage_error("%s is not implemented yet", flag);
  }
  return 0;
}

static const optdef *find_long(const char *name, size_t len) {
  size_t i;
  for (i = 0; i < sizeof options / sizeof options[0]; i++)
    if (strlen(options[i].name) == len &&
        strncmp(options[i].name, name, len) == 0)
      return &options[i];
  return NULL;
}

static const optdef *find_short(char ch) {
  size_t i;
  for (i = 0; i < sizeof options / sizeof options[0]; i++)
    if (options[i].short_name == ch)
      return &options[i];
  return NULL;
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
      c->paths[c->n_paths++] = arg;
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
        return usage_error("unknown option '%.*s'; see 'scenetest --help'",
                           (int)(len + 2), arg);
      snprintf(flag, sizeof flag, "--%s", o->name);
      if (eq != NULL) {
        if (!o->has_arg)
          return usage_error("option '%s' takes no value", flag);
        val = eq + 1;
      }
    } else {
      o = find_short(arg[1]);
      if (o == NULL)
        return usage_error("unknown option '-%c'; see 'scenetest --help'",
                           arg[1]);
      snprintf(flag, sizeof flag, "-%c", o->short_name);
      if (arg[2] != '\0') {
        if (!o->has_arg)
          return usage_error("unknown option '%s'; see 'scenetest --help'",
                             arg);
        val = arg + 2;
      }
    }
    if (o->has_arg && val == NULL) {
      if (i + 1 >= argc)
        return usage_error("option '%s' needs a value", flag);
      val = argv[++i];
    }
    if ((rc = apply_option(c, o, flag, val)) != 0)
      return rc;
  }
  return 0;
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
  if ((rc = st__validate_init(&val, reg, c->n_plugins > 0,
                              c->cmd == CMD_CHECK || c->strict_platforms,
                              &hooks)) != ST_OK)
    return internal_error("starting the validation pass", rc);
  memset(&ext, 0, sizeof ext);
  ext.check = &hooks;
  ext.warnings = &warnings;
  ext.ignore = c->ignore;
  ext.n_ignore = c->n_ignore;
  st_error_list_init(&errors);
  st_error_list_init(&warnings);
  if ((rc = st_scene_set_new(&set)) != ST_OK) {
    st__validate_free(&val);
    return internal_error("creating the scene set", rc);
  }
  for (i = 0; i < c->n_paths; i++) {
    size_t before = errors.count;
    rc = st__scene_set_load_path_ext(set, c->paths[i], &c->load, &ext,
                                     &errors);
    if (rc == ST_OK)
      continue;
    if (errors.count == before) {
      /* The loader said no without saying why: still one line. */
      if (rc == ST_ENOMEM || rc == ST_EINTERNAL)
        status = internal_error(c->paths[i], rc);
      else
        status = usage_error("%s: %s", c->paths[i], st_status_str(rc));
    } else if (rc == ST_ENOMEM || rc == ST_EINTERNAL) {
      status = EXIT_INTERNAL;
    } else if (status == 0) {
      status = EXIT_USAGE;
    }
  }
  print_load_warnings(&warnings);
  print_load_errors(&errors);
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
  opts->selectors = c->selectors;
  opts->n_selectors = c->n_selectors;
  opts->manual = c->manual;
  opts->rounds = c->rounds;
  opts->skip_golden = c->skip_golden;
  opts->seed = c->seed;
  if (c->jobs != 0)
    opts->jobs = c->jobs;
  opts->golden_threads = c->golden_threads;
  opts->fail_fast = c->fail_fast;
  opts->strict_record = c->strict_record;
  opts->watch = c->watch;
  opts->n_watch = c->n_watch;
  opts->isolate = c->isolate;
  opts->timeout = c->timeout;
  opts->dump_dir = c->dump_dir;
}

/* A platform no backend provides is a usage error listing those that
 * exist (SPEC §5). */
static int check_platform(const cli *c, st_registry *reg) {
  char names[512];
  if (st_registry_has_platform(reg, c->platform))
    return 0;
  st_registry_platforms(reg, names, sizeof names);
  return usage_error("unknown platform '%s'; platforms: %s", c->platform,
                     names);
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
    return usage_error("no cases selected (platform '%s'; --require-cases "
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

static int cmd_list(const cli *c, const st_scene_set *set,
                    const st_run_options *opts) {
  st_case_ref *refs = NULL;
  size_t i, n = 0;
  int status = select_cases(c, set, opts, &refs, &n);

  if (status >= 0)
    return status;
  for (i = 0; i < n; i++)
    printf("%s::%s\n", st_scene_name(refs[i].scene),
           st_scene_case_name(refs[i].scene, refs[i].index));
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
    fprintf(f, " --rounds %u", c->rounds);
  if (c->skip_golden)
    fputs(" --skip-golden", f);
  if (c->strict_record)
    fputs(" --strict-record", f);
  if (c->max_arg_bytes_given)
    fprintf(f, " --max-arg-bytes %" PRIu64, c->load.max_arg_bytes);
  if (c->max_nodes_given)
    fprintf(f, " --max-nodes %zu", c->load.max_nodes);
  if (c->isolate)
    fputs(" --isolate", f);
  if (c->timeout_text != NULL) {
    fputs(" --timeout ", f);
    st__shell_quote(f, c->timeout_text);
  }
  for (i = 0; i < c->n_plugins; i++) {
    fputs(" --plugin ", f);
    st__shell_quote(f, c->plugins[i]);
  }
  for (i = 0; i < c->n_watch; i++) {
    fputs(" --watch ", f);
    st__shell_quote(f, c->watch[i]);
  }
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* The report stream: --output, else a duplicate of the original standard
 * output taken before the run points fd 1 at fd 2 (SPEC §6: nothing a
 * kernel prints may corrupt a report). */
static FILE *open_report(const cli *c) {
  FILE *f;
  int fd;

  if (c->output != NULL) {
    f = fopen(c->output, "w");
    if (f == NULL)
      usage_error("cannot open --output '%s': %s", c->output, strerror(errno));
    return f;
  }
  fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) {
    usage_error("cannot duplicate standard output: %s", strerror(errno));
    return NULL;
  }
  f = fdopen(fd, "w");
  if (f == NULL) {
    close(fd);
    usage_error("cannot open standard output: %s", strerror(errno));
  }
  return f;
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

static int cmd_run(const cli *c, const st_scene_set *set,
                   st_run_options *opts) {
  st_case_ref *refs = NULL;
  size_t n = 0, n_obs = 0;
  st_observer obs[2];
  int has_text = 0, has_tap = 0, has_events = 0;
  FILE *report = NULL, *events = NULL;
  char *rerun = NULL;
  st__report_config cfg, ecfg;
  st_run_result *result = NULL;
  st_error err;
  st_status rc;
  int status = select_cases(c, set, opts, &refs, &n);
  int tap;

  free(refs);
  if (status > 0 || (status == 0 && c->require_cases))
    return status;
  if ((report = open_report(c)) == NULL)
    return EXIT_USAGE;
  memset(&cfg, 0, sizeof cfg);
  cfg.out = report;
  cfg.tty = isatty(fileno(report));
  tap = c->format != NULL ? strcmp(c->format, "tap") == 0 : !cfg.tty;
  /* Opened (and so truncated) even when nothing runs, like the report: a
   * CI step that reads it finds zero cases, not a missing or stale file. */
  if (c->events != NULL) {
    events = fopen(c->events, "w");
    if (events == NULL) {
      status = usage_error("cannot open --events '%s': %s", c->events,
                           strerror(errno));
      goto out;
    }
  }
  if (status == 0) {
    /* Nothing to run: a TAP reader still needs a plan. */
    if (tap)
      st__report_tap_empty(report, "no cases selected");
    goto out;
  }
  status = EXIT_INTERNAL;
  cfg.color = cfg.tty && color_allowed();
  if ((rerun = rerun_options(c)) == NULL)
    goto out;
  cfg.rerun_opts = rerun;

  rc = tap ? st__report_tap_new(&cfg, &obs[n_obs])
           : st__report_text_new(&cfg, &obs[n_obs]);
  if (rc != ST_OK) {
    status = internal_error("creating the reporter", rc);
    goto out;
  }
  has_tap = tap;
  has_text = !tap;
  n_obs++;
  if (events != NULL) {
    memset(&ecfg, 0, sizeof ecfg);
    ecfg.out = events;
    if ((rc = st__report_events_new(&ecfg, &obs[n_obs])) != ST_OK) {
      status = internal_error("creating the events writer", rc);
      goto out;
    }
    has_events = 1;
    n_obs++;
  }

  opts->redirect_stdout = 1;
  st_error_clear(&err);
  rc = st_run(set, opts, obs, n_obs, &result, &err);
  if (rc != ST_OK) {
    status = report_error(&err, rc);
    goto out;
  }
  status = st_run_result_exit_code(result) != 0 ? EXIT_FAILED : EXIT_PASS;

out:
  if (has_tap)
    st__report_tap_free(&obs[0]);
  if (has_text)
    st__report_text_free(&obs[0]);
  if (has_events)
    st__report_events_free(&obs[n_obs - 1]);
  st_run_result_free(result);
  free(rerun);
  if (events != NULL && (ferror(events) || fclose(events) != 0)) {
    fprintf(stderr, "scenetest: error: writing --events '%s' failed\n",
            c->events);
    status = EXIT_INTERNAL;
  }
  if (report != NULL && (ferror(report) || fclose(report) != 0)) {
    fprintf(stderr, "scenetest: error: writing the report failed\n");
    status = EXIT_INTERNAL;
  }
  return status;
}

static int run_command(cli *c) {
  st_scene_set *set = NULL;
  st_registry *reg = NULL;
  st_run_options opts;
  st_status rc;
  int status;

  size_t i;

  if (c->n_paths == 0)
    return usage_error("'%s' needs at least one PATH (a scene file or a "
                       "directory)",
                       c->cmd_name);
  if ((rc = st_registry_new_builtin(&reg)) != ST_OK)
    return internal_error("creating the registry", rc);
  /* Plugins first: they may provide the platform. A plugin that cannot be
   * loaded is a usage error; one whose init fails is a warning. */
  for (i = 0; i < c->n_plugins; i++) {
    st_error err;
    st_error_clear(&err);
    if (st_plugin_load(reg, c->plugins[i], &err) != ST_OK) {
      status = usage_error("%s", err.message);
      goto out;
    }
  }
  if (c->cmd != CMD_CHECK && (status = check_platform(c, reg)) != 0)
    goto out;
  if ((status = load_all(c, reg, &set)) != 0)
    goto out;
  options_from_cli(c, &opts);
  opts.registry = reg;
  switch (c->cmd) {
  case CMD_CHECK:
    status = cmd_check(c, set);
    break;
  case CMD_LIST:
    status = cmd_list(c, set, &opts);
    break;
  default:
    status = cmd_run(c, set, &opts);
    break;
  }
out:
  st_scene_set_free(set);
  st_registry_free(reg);
  if ((fflush(stdout) != 0 || ferror(stdout)) && status == EXIT_PASS) {
    fprintf(stderr, "scenetest: error: writing to standard output failed: "
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
    return usage_error("SCENETEST_LOG_LEVEL: unknown level '%s'; levels: "
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
      return usage_error("--log-file '%s' is also the %s", c->log_file,
                         i == 0 ? "--output" : "--events file");
  log_fd = open(c->log_file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
                                 O_CLOEXEC,
                0666);
  if (log_fd < 0)
    return usage_error("cannot open --log-file '%s': %s", c->log_file,
                       strerror(errno));
  st__log_set_file(log_fd);
  return 0;
}

static int close_log_file(const cli *c, int status) {
  if (log_fd < 0)
    return status;
  st__log_set_file(-1);
  if (close(log_fd) != 0) {
    fprintf(stderr, "scenetest: error: writing --log-file '%s' failed: %s\n",
            c->log_file, strerror(errno));
    status = EXIT_INTERNAL;
  }
  log_fd = -1;
  return status;
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

int main(int argc, char **argv) {
  cli c;
  const char *cmd;
  int status;
  size_t cap = argc > 0 ? (size_t)argc : 1;

  /* timing and compare read logs, not scenes: their own command line. */
  if (argc >= 2 &&
      (strcmp(argv[1], "timing") == 0 || strcmp(argv[1], "compare") == 0))
    return st__cli_measure_main(argc, argv);
  /* --help and --version win wherever they are, as with GNU tools. */
  if (has_flag(argc, argv, "--help", "-h")) {
    fputs(usage_text, stdout);
    return fflush(stdout) == 0 ? EXIT_PASS : EXIT_INTERNAL;
  }
  if (has_flag(argc, argv, "--version", NULL)) {
    printf("scenetest %s\n", st_version_string());
    return fflush(stdout) == 0 ? EXIT_PASS : EXIT_INTERNAL;
  }
  if (argc < 2)
    return usage_error("no command given; commands: run, list, check (see "
                       "'scenetest --help')");

  st__args_tune_allocator();
  memset(&c, 0, sizeof c);
  cmd = argv[1];
  if (strcmp(cmd, "run") == 0)
    c.cmd = CMD_RUN;
  else if (strcmp(cmd, "list") == 0)
    c.cmd = CMD_LIST;
  else if (strcmp(cmd, "check") == 0)
    c.cmd = CMD_CHECK;
  else if (cmd[0] == '-')
    return usage_error("the command comes first: scenetest run|list|check "
                       "[OPTIONS] PATH... (got '%s')",
                       cmd);
  else
    return usage_error("unknown command '%s'; commands: run, list, check, "
                       "timing, compare",
                       cmd);
  c.cmd_name = cmd;
  c.platform = "cpu";
  st_load_options_init(&c.load);
  c.paths = calloc(cap, sizeof *c.paths);
  c.selectors = calloc(cap, sizeof *c.selectors);
  c.watch = calloc(cap, sizeof *c.watch);
  c.plugins = calloc(cap, sizeof *c.plugins);
  c.ignore = calloc(cap, sizeof *c.ignore);
  if (c.paths == NULL || c.selectors == NULL || c.watch == NULL ||
      c.plugins == NULL || c.ignore == NULL) {
    status = internal_error("parsing the command line", ST_ENOMEM);
    goto out;
  }
  if ((status = level_from_env()) != 0)
    goto out;
  if ((status = parse_args(&c, argc, argv)) != 0)
    goto out;
  if ((status = open_log_file(&c)) != 0)
    goto out;
  status = run_command(&c);
  status = close_log_file(&c, status);
out:
  free(c.paths);
  free(c.selectors);
  free(c.watch);
  free(c.plugins);
  free(c.ignore);
  return status;
}
