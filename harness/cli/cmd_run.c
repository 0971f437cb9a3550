/* SPDX-License-Identifier: MIT */
/* `scenetest run` once the scenes are loaded (docs/cli.md): the reports
 * planned against each other and the inputs (a report never overwrites
 * what the run reads), the reporters built from the report-format table
 * and attached as observers, the last-failed state applied and written
 * back, and the run's exit status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "case/result.h"
#include "cli/command.h"
#include "report/report.h"

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
 * by device and inode. */
int st__cli_collect_inputs(const cli *c, const st_scene_set *set,
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
  return bad ? st__cli_internal_error("listing the inputs", ST_ENOMEM) : 0;
}

/* 2 with a usage error when the output path (opt names it) is one of
 * the inputs: refused before it is opened, so nothing is truncated. */
int st__cli_refuse_input(const st__inputs *in, const char *opt,
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

/* The run's reports
 * (docs/cli.md#several-reports-and-the-ci-engines-report-variables): the
 * --format one to --output or standard output, each --report, and those the
 * environment asks for, checked against each other and against --events and the
 * input scenes. */
static int plan_outputs(const cli *c, const st_scene_set *set, st__output *out,
                        size_t *n) {
  st__reserved *res;
  size_t i, n_res = 0, n_scenes = st_scene_set_count(set);
  int fmt = c->format, status;

  *n = 0;
  /* Default: text on a terminal, TAP otherwise (docs/cli.md#tap). */
  if (fmt < 0)
    fmt =
        st__report_format_find(c->output == NULL && isatty(1) ? "text" : "tap");
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
    o->fmt = st__report_format_find(name);
    o->path = colon + 1;
    o->source = "--report";
  }
  if ((status = st__outputs_from_env(out, n)) != 0)
    return status;
  res = calloc(c->paths.n + n_scenes + 2, sizeof *res);
  if (res == NULL)
    return st__cli_internal_error("planning the reports", ST_ENOMEM);
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
    status = st__cli_collect_inputs(c, set, &in);
    for (i = 0; i < *n && status == 0; i++)
      status = st__cli_refuse_input(&in, out[i].source, out[i].path);
    if (status == 0)
      status = st__cli_refuse_input(&in, "--events", c->events);
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
    return st__cli_internal_error("reporting an empty run", ST_ENOMEM);
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
    const st__report_format *f = &st__report_formats[out[i].fmt];
    if (f->empty != NULL) {
      f->empty(out[i].f, "no cases selected");
    } else {
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
 * it (docs/reliability.md#interrupts), else 1 unless every selected case has a
 * result that passed, was skipped or failed as expected (st_run has checked the
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
int st__cli_apply_last_failed(cli *c, const st_scene_set *set,
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
      return st__cli_report_error(&err, ST_EUSAGE);
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

/* --events FILE, opened (and so truncated) even when nothing runs, like
 * the report: a CI step that reads it finds zero cases, not a missing or
 * stale file. 0 or 2. */
static int open_events(const cli *c, FILE **events) {
  if (c->events == NULL)
    return 0;
  *events = fopen(c->events, "we");
  if (*events == NULL)
    return st__cli_usage("cannot open --events '%s': %s", c->events,
                         strerror(errno));
  st__proc_parent_only(fileno(*events));
  return 0;
}

/* Closes --events: status, or 3 when a write failed (said). */
static int close_events(const cli *c, FILE *events, int status) {
  int bad;
  if (events == NULL)
    return status;
  bad = ferror(events) != 0;
  st__proc_parent_only_end(fileno(events));
  if (fclose(events) != 0)
    bad = 1;
  if (!bad)
    return status;
  fprintf(stderr, "scenetest: error: writing --events '%s' failed\n",
          c->events);
  return EXIT_INTERNAL;
}

/* What every reporter of the run is built from (rerun is borrowed). */
static void report_config(const cli *c, const st_scene_set *set,
                          const char *rerun, st__report_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  /* --color: always is 2, colour even off a terminal (outputs.c). */
  cfg->color = c->color_mode == 1   ? 2
               : c->color_mode == 2 ? 0
                                    : color_allowed();
  cfg->verbosity = c->quiet ? -1 : c->verbose;
  cfg->rerun_opts = rerun;
  cfg->argv0 = c->argv0;
  cfg->argc = c->argc;
  cfg->argv = c->argv;
  cfg->shard_source = c->shard.source;
  cfg->junit_xunit1 = c->junit_family == 1;
  cfg->golden_platform = c->golden_platform;
  cfg->scenes = set;
  cfg->durations = (unsigned)c->slowest;
}

/* The observers of the run: each output's reporter (a format written as
 * a whole document makes the run keep the cases' records), the failure
 * log under a TAP --format report; returns how many. */
static size_t report_observers(const st__output *out, size_t n_out,
                               st_run_options *opts, st_observer *obs) {
  size_t i, n_obs = 0;
  for (i = 0; i < n_out; i++) {
    obs[n_obs++] = out[i].obs;
    if (st__report_formats[out[i].fmt].whole_document)
      opts->keep_record = 1;
  }
  if (st__report_formats[out[0].fmt].log_failures) {
    st_observer_init(&obs[n_obs]);
    obs[n_obs].data = opts;
    obs[n_obs++].case_end = log_failure;
  }
  return n_obs;
}

/* The run's setup and teardown in order, with one cleanup path at the
 * end. */
int st__cli_cmd_run(const cli *c, const st_scene_set *set,
                    st_run_options *opts) {
  st_case_ref *refs = NULL;
  size_t n = 0, n_out = 0, n_obs = 0;
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
    return st__cli_internal_error("planning the reports", ST_ENOMEM);
  }
  status = st__cli_select_cases(c, set, opts, &refs, &n);
  free(refs);
  if (status > 0 || (status == 0 && c->require_cases))
    goto out;
  /* From here status is what went wrong, n what was selected. */
  status = 0;
  if ((status = plan_outputs(c, set, out, &n_out)) != 0)
    goto out;
  if ((status = open_events(c, &events)) != 0)
    goto out;
  if ((rerun = st__cli_rerun_options(c)) == NULL) {
    status = st__cli_internal_error("building the rerun command", ST_ENOMEM);
    goto out;
  }
  report_config(c, set, rerun, &cfg);
  if (c->verbose)
    opts->keep_record = 1; /* the phase times -v prints */
  if ((status = st__outputs_open(out, n_out, &cfg)) != 0)
    goto out;
  if (n == 0) {
    status = report_empty(out, n_out, opts);
    goto out;
  }
  n_obs = report_observers(out, n_out, opts, obs);
  if (events != NULL) {
    memset(&ecfg, 0, sizeof ecfg);
    ecfg.out = events;
    if ((rc = st__report_events_new(&ecfg, &events_obs)) != ST_OK) {
      status = st__cli_internal_error("creating the events writer", rc);
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
    status = st__cli_report_error(&err, rc);
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
  status = close_events(c, events, status);
  close_status = st__outputs_close(out, n_out);
  if (close_status != 0)
    status = close_status;
  free(out);
  free(obs);
  return status;
}

/* Selects; prints "no cases selected" when the filters left nothing.
 * Returns -1 to go on, else the exit status. */
int st__cli_select_cases(const cli *c, const st_scene_set *set,
                         const st_run_options *opts, st_case_ref **refs,
                         size_t *n) {
  st_error err;
  st_status rc;

  st_error_clear(&err);
  rc = st_select_cases(set, opts, refs, n, &err);
  if (rc != ST_OK)
    return st__cli_report_error(&err, rc);
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
