/* SPDX-License-Identifier: MIT */
/* What the scenetest program's files share: the shard from --shard and
 * the CI engines' variables (shard.c), the cases an earlier report says
 * failed (rerun.c), and the machine reports' outputs (outputs.c). Each
 * function that can fail prints its one "scenetest: error: ..." line and
 * returns 2 (usage) or 3 (internal); 0 is success. */
#ifndef SCENETEST_HARNESS_CLI_INTERNAL_H
#define SCENETEST_HARNESS_CLI_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include <scenetest/scenetest.h>

#include "report/report.h"
#include "cli/rerun_parse.h"

/* Writes the message fmt formats to f with its control bytes escaped and
 * line breaks as spaces (errline.c): for every "scenetest: error: ..."
 * line, whose message may quote what the user typed. */
void st__cli_vprint_printable(FILE *f /* IN/OUT */, const char *fmt /* IN */,
                              va_list ap);
/* Prints "scenetest: error: " and the formatted message as one line on
 * stderr; returns 2, the usage exit status. Thread-safety: any thread
 * (one line per call, not interleaved by stdio's lock). */
int st__cli_usage(const char *fmt /* IN */, ...) ST_PRINTF(1, 2);

/* Reads the report file at path whole (readall.c), NUL-terminated, into
 * *text (the caller frees it) and its length into *len: 0, or 2 after a
 * usage error that starts with what (the command or option reading it)
 * when the file cannot be read or is over 1 GiB. */
int st__cli_read_report(const char *what /* IN */, const char *path /* IN */,
                        char **text /* OUT: owned by the caller */,
                        size_t *len /* OUT */);
/* Says "internal error: out of memory reading WHAT" on stderr; returns
 * 3 (docs/cli.md#exit-status). */
int st__cli_read_oom(const char *what /* IN */);

/* From now on st__cli_usage starts its line with "FILE:LINE:COL: error: "
 * (a value of the configuration file is being applied); file NULL: back
 * to "scenetest: error: ". file is borrowed. The main thread only. */
void st__cli_usage_at(const char *file /* IN */, int line, int col);

/* The configuration file (config.c; docs/cli.md#the-configuration-file). */
typedef struct st__cli_config {
  char *path;   /* the file read; NULL: none; owned */
  char *dir;    /* its directory; owned */
  char **owned; /* values made here (resolved paths); owned */
  size_t n_owned;
  void *file; /* the st__config_file; owned */
} st__cli_config;

/* Applies one key's value: key (an option's long name, or "paths"), the
 * value (relative paths already resolved against the file's directory),
 * is_list (the value was an item of a YAML list). file:line:col is the
 * value's position. 0 or an exit status (its line printed). */
typedef int (*st__cli_config_apply)(void *ctx, const char *key,
                                    const char *value, int is_list,
                                    const char *file, int line, int col);

/* Which configuration file applies: `--config FILE` (explicit, may be
 * NULL), else none under `--no-config` (no_config), else the first
 * scenetest.yaml from the current directory upwards, stopping after a
 * directory that holds .git. Reads it and calls apply for each value in
 * file order. A key not in keys[0..n_keys) (nor "paths") is a usage
 * error with the nearest key, at FILE:LINE:COL. 0, 2 or 3. */
int st__cli_config_load(st__cli_config *cfg /* OUT */,
                        const char *explicit_path /* IN, may be NULL */,
                        int no_config, const char *const *keys /* IN */,
                        size_t n_keys, st__cli_config_apply apply, void *ctx);
void st__cli_config_free(st__cli_config *cfg /* IN/OUT */);

/* Loads the --plugin specs[0..n) into reg (probe.c): as they come, or,
 * when forks (the run forks its cases: supervised or --isolate), eager
 * ones through a probe child and declared deferred, so that this process
 * loads none. 0, or 2 with the error line printed. */
int st__cli_load_plugins(st_registry *reg /* IN/OUT */,
                         const char *const *specs /* IN */, size_t n,
                         int forks);

/* Cases that need what the run lacks (needs.c; docs/cli.md): `check`
 * names each golden backend the validation pass found missing, once; a
 * run ends with one warning counting the cases skipped for that reason
 * (nothing when there are none). Thread-safety: the main thread. */
struct st__validate;
void st__cli_warn_needs(const struct st__validate *v /* IN */);
void st__cli_warn_skipped(const st_run_result *run /* IN */);

/* The plugins the build tree built (buildtree.c; docs/cli.md): when this
 * binary runs from its build directory, declare(reg, path) for each
 * plugin that `meson install` would put in $libdir/scenetest/plugins;
 * nothing for an installed binary. Thread-safety: the main thread. */
void st__cli_declare_build_tree(st_registry *reg /* IN/OUT */,
                                void (*declare)(st_registry *reg,
                                                const char *path));

/* A shard: index of total (total 0: unsharded) and what said so. */
typedef struct st__shard {
  unsigned index;
  unsigned total;
  const char *source; /* "--shard", "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS",
                         ...; NULL when unsharded */
} st__shard;

/* Parses "K/N" (0 <= K < N <= 65536, decimal digits only). 0 or 2. */
int st__shard_parse(const char *text /* IN */, st__shard *out /* OUT */);
/* The run's shard (docs/cli.md#sharding): option (from --shard; total 0 if
 * absent) checked against the environment's pairs in the order GTEST_*, TEST_*,
 * CI_NODE_* (1-based; CI_NODE_TOTAL alone or equal to 1 is unsharded),
 * CIRCLE_NODE_*, BUILDKITE_PARALLEL_JOB* (docs/cli.md#sharding). A total
 * of 1 is unsharded and agrees with anything. Half a pair, a malformed
 * value, two pairs or the option and a pair that disagree: a usage error
 * naming them. With touch, TEST_SHARD_STATUS_FILE
 * (when set) is created or its mtime updated. 0, 2. */
int st__shard_resolve(const st__shard *option /* IN */, int touch,
                      st__shard *out /* OUT */);

/* The names ("SCENE::CASE", repeat suffix dropped) of the cases that an
 * earlier --events, json, junit or tap report (told apart by content) says
 * failed, errored or passed unexpectedly. *names is a malloc'd array of
 * malloc'd strings (st__names_free). 0, 2 (unreadable, not a report),
 * 3. */
int st__rerun_read(const char *path /* IN */, char ***names /* OUT */,
                   size_t *n /* OUT */);

/* One report of a run: a format and where it goes. */
typedef struct st__output {
  int fmt;            /* a row of st__report_formats (report/report.h) */
  const char *path;   /* NULL: the original standard output */
  const char *source; /* what asked for it: "--output", "--report",
                         "GTEST_OUTPUT", "XML_OUTPUT_FILE" */
  char *real;         /* realpath of path (its directory's, when the file
                         does not exist yet); owned */
  char *owned_path;   /* path when built here (GTEST_OUTPUT=xml); owned */
  FILE *f;
  st_observer obs;
  int has_obs;
} st__output;

/* A file that no report may alias (--events, an input scene). */
typedef struct st__reserved {
  const char *what; /* "--events", "input scene" */
  const char *path;
} st__reserved;

/* Adds the reports that GTEST_OUTPUT and XML_OUTPUT_FILE ask for to
 * out[*n] (room for 2 more). 0 or 2 (a GTEST_OUTPUT that is not xml or
 * json). */
int st__outputs_from_env(st__output *out /* IN/OUT */, size_t *n /* IN/OUT */);
/* Resolves every output's real path, drops later duplicates of the same
 * (format, real path), and refuses any other aliasing among the outputs
 * and the reserved files: 0 or 2. */
int st__outputs_check(st__output *out /* IN/OUT */, size_t *n /* IN/OUT */,
                      const st__reserved *reserved /* IN */, size_t n_reserved);
/* Opens each output (path NULL: a duplicate of fd 1, taken before the run
 * points fd 1 at fd 2) and creates its reporter from cfg (cfg.out is set
 * per output). 0, 2 (cannot open) or 3. */
int st__outputs_open(st__output *out /* IN/OUT */, size_t n,
                     const st__report_config *cfg /* IN */);
/* Frees the reporters and closes the files; 0, or 3 if a write failed
 * (said on stderr). */
int st__outputs_close(st__output *out /* IN/OUT */, size_t n);

/* The filters after --case (tags.c; docs/cli.md#tags-and--k): --tag EXPR
 * over the case's tags, -k EXPR over its id, --skip selectors. *out stays
 * NULL when none is given. 0; 2 with the usage error printed (an
 * expression's error at its column, a --skip that matches no loaded
 * case); 3 out of memory (said). */
typedef struct st__filter st__filter;
int st__filter_new(const st_scene_set *set /* IN */, const char *tag /* IN */,
                   const char *k /* IN */, const char *const *skips /* IN */,
                   size_t n_skips, st__filter **out /* OUT */);
/* st_run_options.case_filter: nonzero to keep case c of scene. */
int st__filter_keep(void *data /* IN: st__filter */,
                    const st_scene *scene /* IN */, size_t c);
void st__filter_free(st__filter *f /* IN, owned */);
/* Case c's tags as a JSON array (`list --format json`). */
void st__cli_json_tags(FILE *out /* IN */, const st_scene *scene /* IN */,
                       size_t c);

/* The last-failed state (lastfailed.c; docs/cli.md#last-failed):
 * DIR/lastfailed, a JSON object {"SCENE::CASE": true, ...}. Reads it into
 * *names (st__names_free) and returns 1; 0 when there is none; -1 when it
 * cannot be read or is not such an object (a warning said, *names NULL);
 * -2 out of memory. Thread-safety: the main thread. */
int st__lastfailed_read(const char *dir /* IN */, char ***names /* OUT */,
                        size_t *n /* OUT */);
/* Writes DIR/lastfailed after a run as pytest's cacheprovider does: the
 * old names (old[0..n_old)) without the cases that passed (or failed as
 * expected), with the cases that failed, errored or passed unexpectedly;
 * a case not run keeps its entry. Atomic (a temporary file renamed);
 * creates DIR with a .gitignore of `*`. 0, or a warning said and -1. */
int st__lastfailed_write(const char *dir /* IN */, char *const *old /* IN */,
                         size_t n_old, const st_run_result *run /* IN */);

#endif
