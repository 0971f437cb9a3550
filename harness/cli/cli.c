/* SPDX-License-Identifier: MIT */
/* The scenetest command: `run`, `list` and `check`
 * (docs/cli.md#the-scenetest-command-line). It parses the command line, loads
 * the scenes, selects cases, wires the reporters to the run as observers, and
 * maps outcomes to the exit status: 0 all selected cases passed or were
 * skipped, 1 a case failed, 2 usage, load or validation error (nothing ran), 3
 * internal error. */
#include <assert.h>
#include <errno.h>
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
#include "cli/command.h"
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

/* The load-time checks' warnings (docs/scene-format.md#load-errors),
 * "FILE:LINE:COL: warning:". */
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

  /* The validation pass (docs/scene-format.md#load-errors): `check` holds
   * platforms strictly. */
  if ((rc = st__validate_init(&val, reg, c->plugins.n > 0,
                              c->cmd == CMD_CHECK || c->strict_platforms,
                              &hooks)) != ST_OK)
    return st__cli_internal_error("starting the validation pass", rc);
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
    return st__cli_internal_error("creating the scene set", rc);
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
        status = st__cli_internal_error(c->paths.items[i], rc);
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

/* The run options that take an option's value as it is: the rows with a
 * `run` field (options.c). Lists are an items pointer then a count. */
_Static_assert(sizeof(st_manual_mode) == sizeof(int), "manual is an int");
_Static_assert(offsetof(st_run_options, n_selectors) ==
                       offsetof(st_run_options, selectors) + sizeof(void *) &&
                   offsetof(st_run_options, n_watch) ==
                       offsetof(st_run_options, watch) + sizeof(void *),
               "a list's count follows its items");

static void copy_to_run(const cli *c, const optdef *o, st_run_options *opts) {
  const char *from = (const char *)c + o->offset;
  char *to = (char *)opts + (o->run - 1);
  unsigned u;

  if (o->type == ARG_LIST || (o->flags & OPT_REPEATABLE)) {
    const strlist *l = (const strlist *)from;
    memcpy(to, &l->items, sizeof l->items);
    memcpy(to + sizeof(void *), &l->n, sizeof l->n);
    return;
  }
  /* The row's field and its run field hold the same type (a row that
   * breaks this is a programming error, caught by any debug run). */
  assert(o->type == ARG_UINT || o->type == ARG_BYTES
             ? o->run_size == sizeof u || o->run_size == sizeof(uint64_t)
         : o->type == ARG_STRING ? o->run_size == sizeof(const char *)
                                 : o->run_size == sizeof(int));
  switch (o->type) {
  case ARG_UINT:
    if (o->run_size == sizeof u) {
      u = (unsigned)*(const uint64_t *)from;
      memcpy(to, &u, sizeof u);
      return;
    }
    break;
  default:
    break;
  }
  memcpy(to, from, o->run_size);
}

static void options_from_cli(const cli *c, st_run_options *opts) {
  st_run_options_init(opts);
  for (size_t i = 0; i < st__cli_n_options; i++)
    if (st__cli_options[i].run != 0)
      copy_to_run(c, &st__cli_options[i], opts);
  if (c->jobs != 0)
    opts->jobs = (unsigned)c->jobs;
  opts->timeout = c->timeout;
  /* `run` supervises unless told not to
   * (docs/reliability.md#the-process-model); the library does not unless asked.
   */
  opts->supervise = c->cmd == CMD_RUN && !c->no_supervise;
  opts->shard_index = c->shard.index;
  opts->shard_total = c->shard.total;
  opts->repeat = c->repeat > 1 ? (unsigned)c->repeat : 1;
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

  char names[128];

  if (c->cmd == CMD_LIST && c->format >= 0 &&
      !st__report_formats[c->format].list)
    return st__cli_usage("list: --format must be %s (got '%s')",
                         st__report_format_names(names, sizeof names,
                                                 ST__FMT_LIST, ", ", " or "),
                         st__report_format_name(c->format));
  /* The CI engines' variables shard `run` (docs/cli.md#sharding); `list` shows
   * a shard only when asked with --shard. */
  if (c->cmd == CMD_RUN && (rc = st__shard_resolve(&option, 1, &c->shard)) != 0)
    return rc;
  if (c->shuffle && !st__cli_given(c, "shuffle-seed")) {
    /* docs/cli.md#repeat-and-shuffle: CLOCK_REALTIME ns mod 2^32, printed in
     * every report so the order can be replayed. */
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
    return st__cli_report_error(&err, rc);
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
  status = st__cli_internal_error("splitting by durations", ST_ENOMEM);
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
 * exist (docs/plugins.md#loading). */
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
  int status = st__cli_select_cases(c, set, opts, &refs, &n);

  if (status > 0)
    return status;
  if (c->format >= 0 &&
      strcmp(st__report_format_name(c->format), "json") == 0) {
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
    return st__cli_internal_error("creating the registry", rc);
  /* Plugins first: they may provide the platform. A plugin that cannot be
   * loaded is a usage error; one whose init fails is a warning. A run that
   * forks its cases (supervised, --isolate) loads none here: the
   * processes that dispatch do (docs/reliability.md#the-process-model;
   * cli/probe.c). `bench` loads them here, where it measures the
   * platform's ceilings before forking (docs/bench.md#supervision). */
  if ((status = st__cli_load_plugins(reg, c->plugins.items, c->plugins.n,
                                     c->cmd == CMD_RUN && c->bench == NULL &&
                                         (!c->no_supervise || c->isolate))) !=
      0)
    goto out;
  /* After the explicit ones, which hide their platforms' defaults. */
  if (!c->no_default_plugins)
    st__cli_declare_default_plugins(reg);
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
      (status = st__cli_apply_last_failed(c, set, &opts)) != 0)
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
      /* docs/bench.md#supervision: one case at a time, supervised,
       * isolated or in this process as for `run`. */
      opts.jobs = 1;
      opts.skip_golden |= c->bench->no_check;
      status = st__cli_bench_run(c->bench, set, &opts, reg);
    } else {
      status = st__cli_cmd_run(c, set, &opts);
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
    int st = st__cli_collect_inputs(c, NULL, &in);
    if (st == 0)
      st = st__cli_refuse_input(&in, "--log-file", c->log_file);
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

/* The terminal rule (docs/cli.md): with stderr a terminal, TIMING lines
 * stay off it unless a level of timing or lower was set (flag,
 * SCENETEST_LOG_LEVEL or the configuration file); the --log-file still
 * gets them. */
static void hold_timing_lines(const cli *c) {
  int explicit = c->source[st__cli_option_index("log-level")] != SRC_DEFAULT;
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

/* `bench` times its cases one at a time (docs/bench.md#supervision): -j
 * above 1 on the command line is a usage error, a configuration file's
 * `jobs` (meant for `run`) is ignored. */
static int bench_jobs(cli *c) {
  for (size_t i = 0; i < st__cli_n_options; i++)
    if (strcmp(st__cli_options[i].name, "jobs") == 0 &&
        c->source[i] == SRC_CLI && c->jobs > 1)
      return st__cli_usage("bench: -j %llu: the cases are timed one at a time "
                           "(-j 1), so that none runs beside another",
                           (unsigned long long)c->jobs);
  c->jobs = 1;
  return 0;
}

/* `bench`: `run`'s command line, less bench's own options (cli/bench.h),
 * in *rest (owned by the caller). */
static int bench_args(int *argc, char ***argv, st__cli_bench *b, char ***rest) {
  int status;
  if ((*rest = calloc((size_t)*argc + 1, sizeof **rest)) == NULL)
    return st__cli_internal_error("parsing the command line", ST_ENOMEM);
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
    st__cli_help(stdout);
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
      status = st__cli_internal_error("parsing the command line", ST_ENOMEM);
      goto out;
    }
  if ((status = st__cli_gather_options(&c, argc, argv)) != 0 ||
      (status = settle_options(&c)) != 0)
    goto out;
  if (c.show_config) {
    status = st__cli_show_config(&c);
    goto out;
  }
  if (c.bench != NULL && (status = bench_jobs(&c)) != 0)
    goto out;
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
