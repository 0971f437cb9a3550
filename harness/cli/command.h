/* SPDX-License-Identifier: MIT */
/* What the files of the scenetest command share (docs/cli.md): the parsed
 * command line (struct cli), the one option table whose rows carry each
 * option's parsing, help text and rerun flag (options.c), what is
 * generated from it (help.c: the usage text and the rerun command;
 * args.c: parsing, the configuration file, --show-config), and the steps
 * of `run` (cmd_run.c) that cli.c calls. Functions that can fail print
 * their one "scenetest: error: ..." line and return an exit status. The
 * main thread only. */
#ifndef SCENETEST_HARNESS_CLI_COMMAND_H
#define SCENETEST_HARNESS_CLI_COMMAND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <scenetest/scenetest.h>

#include "cli/bench.h"
#include "cli/cli_internal.h"
#include "cli/inputs.h"
#include "cli/shard_by.h"

enum { EXIT_PASS = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

enum { CMD_RUN = 1, CMD_LIST = 2, CMD_CHECK = 4 };
#define CMD_ALL (CMD_RUN | CMD_LIST | CMD_CHECK)
#define CMD_SELECT (CMD_RUN | CMD_LIST)

/* docs/cli.md#the-configuration-file: at most this many values in the
 * configuration file (each list has room for argc of them more). */
#define CONFIG_VALUES_MAX 1024

/* A list of strings taken from repeatable options (borrowed from argv). */
typedef struct strlist {
  const char **items;
  size_t n;
} strlist;

/* The options the table may hold: the per-option arrays of struct cli
 * (what was given, and from where) are this long; checked against the
 * table (cli/options.c). */
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
  int format; /* a row of st__report_formats; -1: by terminal */
  const char *output;
  const char *events;
  int log_level;
  uint64_t max_arg_bytes;
  uint64_t max_nodes;
  uint64_t max_file_bytes;
  st_load_options load;
  const char *timeout_text; /* as given */
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
  const char
      *argv0; /* the program as invoked (docs/cli.md#output rerun command) */
  int argc;
  char **argv;
  unsigned char given[CLI_OPTIONS_CAP]; /* given[i]: st__cli_options[i]
                                        was given (command line or
                                        configuration file) */
  /* docs/cli.md#the-configuration-file: where each option's value came from
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
  /* docs/cli.md#tags-and--k, #maxfail, #durations, #last-failed */
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

/* Where an option's value came from (--show-config). */
enum { SRC_DEFAULT, SRC_CONFIG, SRC_ENV, SRC_CLI };

/* The type of an option's value states how it is parsed and checked; the
 * checks are written once, in args.c (curl's tool_getparam.c keeps its
 * options the same way). */
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

/* The --help section an option is listed under, in the order shown. */
typedef enum opt_section {
  SEC_SELECT,  /* "Selection (run, list):" */
  SEC_RUN,     /* "Running (run):" */
  SEC_OUTPUT,  /* "Output (run):" */
  SEC_LOAD,    /* "Loading (run, list, check):" */
  SEC_GENERAL, /* "General:" */
  SEC_COUNT
} opt_section;

/* Row flags. */
enum {
  OPT_RERUN = 1,      /* the rerun command of a failed case repeats it
                         (without it the case may not reproduce: a
                         plugin's platform, a file's load limits) */
  OPT_CLI_ONLY = 2,   /* the configuration file may not set it */
  OPT_REPEATABLE = 4, /* an ARG_CUSTOM that appends to the strlist at
                         offset (ARG_LIST is repeatable by its type) */
  OPT_HIDDEN = 8      /* shown in --help on the line of the row whose
                         alias names it */
};

/* One option: how it is parsed, and what --help, the configuration file,
 * --show-config and the rerun command say of it. */
typedef struct optdef {
  const char *name; /* long name without "--" */
  char short_name;  /* 0: none */
  arg_type type;
  int cmds;          /* commands that take it */
  size_t offset;     /* the field of cli it sets (ARG_CUSTOM: only with
                        OPT_REPEATABLE) */
  uint64_t min, max; /* ARG_UINT */
  const char *what;  /* ARG_STRING, ARG_LIST: "--X needs WHAT" if empty */
  const char *const *choices; /* ARG_CHOICE */
  /* ARG_CUSTOM, ARG_ACTION: 0 or an exit status */
  int (*custom)(struct cli *c, const struct optdef *o, const char *val);
  opt_section section;
  const char *metavar; /* the value's name in --help ("N"); NULL: none */
  const char *alias;   /* another long name shown before it ("lf") */
  /* The --help text: lines after the first start at column 25 ("\n"
   * breaks them); {formats}, {list formats} and {report formats} become
   * the report formats' names (report/report.h). */
  const char *help;
  unsigned flags; /* OPT_* */
  /* The st_run_options field that takes the value as it is, plus 1 (0:
   * none; options_from_cli in cli.c sets what needs more), and its size:
   * an int for ARG_FLAG and ARG_CHOICE, a string for ARG_STRING, unsigned
   * or uint64_t for ARG_UINT, items then count for a list. */
  size_t run, run_size;
} optdef;

/* Every option of every command (options.c), n of them. */
extern const optdef st__cli_options[];
extern const size_t st__cli_n_options;

/* The option named by name[0..len), or by short name ch; NULL: none. */
const optdef *st__cli_find_long(const char *name /* IN */, size_t len);
const optdef *st__cli_find_short(char ch);
/* The index of option --name; -1 for none. */
int st__cli_option_index(const char *name /* IN */);
/* Whether option --name was given (command line or configuration file). */
int st__cli_given(const cli *c /* IN */, const char *name /* IN */);

/* Parses a decimal integer in [min, max] for --opt into *out: 0 or 2. */
int st__cli_parse_uint(const char *opt /* IN */, const char *text /* IN */,
                       uint64_t min, uint64_t max, uint64_t *out /* OUT */);
/* The configuration file, then SCENETEST_LOG_LEVEL, then the command line
 * (docs/cli.md#the-configuration-file), into c; the file's paths when the
 * command line gives none. 0 or an exit status. */
int st__cli_gather_options(cli *c /* IN/OUT */, int argc, char **argv);
/* --show-config: every option's merged value and its source, then the
 * paths, on stdout. 0 or 3. */
int st__cli_show_config(const cli *c /* IN */);

/* The usage text (--help), generated from the table. */
void st__cli_help(FILE *out /* IN */);
/* The options the rerun command repeats (the OPT_RERUN rows that were
 * given), " --rounds 3 --plugin P", malloc'd; NULL when out of memory. */
char *st__cli_rerun_options(const cli *c /* IN */);

/* "scenetest: error: internal error: WHAT: STATUS"; returns 3. */
int st__cli_internal_error(const char *what /* IN */, st_status rc);
/* An st_error of the library: ST_EUSAGE and input errors are the user's
 * (2), the rest internal (3). */
int st__cli_report_error(const st_error *err /* IN */, st_status rc);
/* Selects; prints "no cases selected" when the filters left nothing.
 * Returns -1 to go on, else the exit status. */
int st__cli_select_cases(const cli *c /* IN */, const st_scene_set *set,
                         const st_run_options *opts /* IN */,
                         st_case_ref **refs /* OUT */, size_t *n /* OUT */);

/* Every file the run reads into in; 0 or 3 (cmd_run.c). */
int st__cli_collect_inputs(const cli *c /* IN */,
                           const st_scene_set *set /* IN, may be NULL */,
                           st__inputs *in /* IN/OUT */);
/* 2 with a usage error when path (opt names it) is one of the inputs. */
int st__cli_refuse_input(const st__inputs *in /* IN */, const char *opt,
                         const char *path /* IN, may be NULL */);
/* --last-failed, --failed-first (docs/cli.md#last-failed) into opts. 0 or
 * an exit status. */
int st__cli_apply_last_failed(cli *c /* IN/OUT */, const st_scene_set *set,
                              st_run_options *opts /* IN/OUT */);
/* `scenetest run` (cmd_run.c): select, open every output, build the
 * reporters, run, close the outputs. The exit status. */
int st__cli_cmd_run(const cli *c /* IN */, const st_scene_set *set,
                    st_run_options *opts /* IN/OUT */);
/* The installed plugins, declared lazily (plugins_default.c;
 * docs/cli.md#options: --no-default-plugins). */
void st__cli_declare_default_plugins(st_registry *reg /* IN/OUT */);

#endif
