/* SPDX-License-Identifier: MIT */
/* The TAP reporter (docs/cli.md#tap): "TAP version 13" and the plan before the
 * first point, one numbered point per case in finish order, skips as
 * "ok N - ... # SKIP reason", and after a failing point a 2-space-indented
 * YAML block with the message, severity and data. Only what both prove
 * (Test::Harness 3.44, which refuses "TAP version 14") and meson's TAP
 * reader accept: no subtests, no "not ok ... # SKIP". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/json.h"
#include "report/report.h"
#include "report/trust.h"

typedef struct tap_state {
  st__report_config cfg;
  st_run_info info; /* from run_begin */
  int started;      /* header and plan written */
  size_t total;     /* the plan */
  size_t number;    /* points written */
  size_t counts[6]; /* of them, by st_case_status (the totals line) */
  /* Output is a regular file: points are left to stdio's buffer (a flush
   * per point was a write(2) per case); a failing point, the end and an
   * interrupt still flush. A pipe or terminal gets every point at once,
   * for the reader watching it. */
  int to_file;
} tap_state;

static void tap_start(tap_state *st, size_t total) {
  if (st->started)
    return;
  st->started = 1;
  st->total = total;
  fprintf(st->cfg.out, "TAP version 13\n1..%zu\n", total);
  /* docs/cli.md#tap's header order: version, plan, shard, shuffle seed. */
  st__report_run_header(st->cfg.out, "# ", &st->info);
  fflush(st->cfg.out);
}

static void tap_run_begin(void *data, const st_run_info *info) {
  tap_state *st = data;
  st->info = *info;
  tap_start(st, info->total);
}

static void tap_case_end(void *data, const st_case_info *info,
                         const st_case_result *res) {
  tap_state *st = data;
  FILE *out = st->cfg.out;
  st_case_status status = st_case_result_status(res);
  const char *msg = st_case_result_message(res);
  const char *output = st_case_result_output(res);
  char *rerun = NULL, *id;
  size_t rerun_len = 0;
  FILE *mem;

  tap_start(st, info->total);
  st->number++;
  if ((unsigned)status <= ST_CASE_XPASS)
    st->counts[status]++;
  /* Scene names are identifiers and a matrix case's name adds only
   * [A-Za-z0-9_.+=,-] and brackets: no '#' or '\' to escape in the
   * description (and a repeat is "@k", not "#k", for that reason). */
  id = st__report_case_id(info->scene, info->name, info->iteration,
                          st->info.repeat, 0);
  fprintf(out, "%s %zu - %s",
          status == ST_CASE_PASS || status == ST_CASE_SKIP ? "ok" : "not ok",
          st->number, id != NULL ? id : info->name);
  free(id);
  if (status == ST_CASE_XFAIL) {
    /* docs/scene-format.md#expected-failures: TAP's TODO, which prove and meson
     * do not count as a failure. */
    fputs(" # TODO expected failure", out);
    if (msg != NULL && msg[0] != '\0') {
      /* The message's first line: the directive stays on the point's
       * line; the details are for failures, which this is not. */
      size_t n = strcspn(msg, "\n");
      char *first = strndup(msg, n);
      fputs(": ", out);
      st__ascii_line(out, first != NULL ? first : "");
      free(first);
    }
  }
  if (status == ST_CASE_SKIP) {
    fputs(" # SKIP", out);
    if (msg != NULL && msg[0] != '\0') {
      fputc(' ', out);
      /* A directive's text must stay on the point's line; '#' needs
       * no escape after the SKIP directive. */
      st__ascii_line(out, msg);
    }
  }
  fputc('\n', out);
  if (status == ST_CASE_FAIL || status == ST_CASE_ERROR ||
      status == ST_CASE_XPASS) {
    fputs("  ---\n  message: ", out);
    st__yaml_string(out, msg != NULL ? msg : st_case_status_name(status));
    fprintf(out, "\n  severity: %s\n  data:\n    platform: ",
            status == ST_CASE_FAIL    ? "fail"
            : status == ST_CASE_XPASS ? "xpass"
                                      : "error");
    st__yaml_string(out, st_case_result_platform(res));
    fprintf(out, "\n    seed: %" PRIu64 "\n    status: %s\n    file: ",
            st_case_result_seed(res), st_case_status_name(status));
    st__yaml_string(out, st_case_result_file(res));
    fprintf(out, "\n    line: %d\n    rerun: ", st_case_result_line(res));
    mem = open_memstream(&rerun, &rerun_len);
    if (mem != NULL) {
      st__report_rerun(mem, &st->cfg, st_case_result_scene(res),
                       st_case_result_case(res), st_case_result_seed(res),
                       st_case_result_platform(res), st_case_result_file(res));
      fclose(mem);
    }
    st__yaml_string(out, rerun != NULL ? rerun : "");
    free(rerun);
    if (output != NULL) {
      fputs("\n    output: ", out);
      st__yaml_string(out, output);
    }
    fputs("\n  ...\n", out);
  }
  /* After the point (and its block): comments, which TAP readers show
   * and do not count (docs/reports.md, "Trust"). */
  st__report_warnings(out, "# ", res);
  if (!st->to_file || status != ST_CASE_PASS)
    fflush(out);
}

/* The totals of the points written, as TAP's last comment
 * (docs/cli.md#tap): "# N cases: P passed, F failed, E errors, S
 * skipped, X xfail, Y xpass"; before any "Bail out!", which stays last. */
static void tap_totals(const tap_state *st) {
  const size_t *c = st->counts;
  fprintf(st->cfg.out,
          "# %zu cases: %zu passed, %zu failed, %zu errors, %zu skipped, "
          "%zu xfail, %zu xpass\n",
          st->number, c[ST_CASE_PASS], c[ST_CASE_FAIL], c[ST_CASE_ERROR],
          c[ST_CASE_SKIP], c[ST_CASE_XFAIL], c[ST_CASE_XPASS]);
}

/* An interrupted run ends with "Bail out!" (docs/reliability.md#interrupts),
 * after every point (the running case an error, the rest skips); so does one
 * whose points do not match its plan, which a reader would otherwise see only
 * as a count. */
static void tap_run_end(void *data, const st_run_result *result) {
  tap_state *st = data;
  st__durations_text(st->cfg.out, result, st->cfg.durations, "# ");
  /* The quarantine list, then the totals (docs/cli.md#tap). */
  (void)st__report_quarantine_list(st->cfg.out, NULL,
                                   "# quarantined: ", result);
  if (st->started)
    tap_totals(st);
  if (result != NULL && st_run_result_interrupted(result))
    fputs("Bail out! interrupted\n", st->cfg.out);
  else if (st->started && st->number != st->total)
    fprintf(st->cfg.out, "Bail out! %zu of %zu cases reported\n", st->number,
            st->total);
  fflush(st->cfg.out);
}

st_status st__report_tap_new(const st__report_config *cfg, st_observer *obs) {
  tap_state *st = st__report_state_new(obs, sizeof *st);

  if (st == NULL)
    return ST_ENOMEM;
  st->cfg = *cfg;
  struct stat sb;
  /* Each point is flushed where someone may read it as it comes (a
   * terminal, a pipe, a socket); into a file or /dev/null the points
   * are buffered, flushed after a failing one and at the end. */
  st->to_file = cfg->out != NULL && fstat(fileno(cfg->out), &sb) == 0 &&
                !S_ISFIFO(sb.st_mode) && !S_ISSOCK(sb.st_mode) &&
                !isatty(fileno(cfg->out));
  obs->run_begin = tap_run_begin;
  obs->case_end = tap_case_end;
  obs->run_end = tap_run_end;
  return ST_OK;
}

void st__report_tap_free(st_observer *obs) { st__report_state_free(obs); }

void st__report_tap_empty(FILE *out, const char *reason) {
  fputs("TAP version 13\n1..0 # SKIP ", out);
  st__ascii_line(out, reason);
  fputc('\n', out);
  fflush(out);
}
