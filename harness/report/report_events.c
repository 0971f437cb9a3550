/* SPDX-License-Identifier: MIT */
/* The --events writer: JSON Lines, one object per case in the order the
 * cases finish, with the case's full event list (docs/cli.md#--events-file).
 * Each line is flushed as it is written so that a run that dies keeps what
 * finished. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "case/result.h"
#include "report/json.h"
#include "report/report.h"
#include "report/trust.h"

typedef struct events_state {
  FILE *out;
} events_state;

static void write_event(FILE *out, const st_event *ev) {
  fputs("{\"name\": ", out);
  st__json_string(out, ev->name);
  if (strcmp(ev->name, "load") == 0) {
    /* A load event names the object and the phase that loaded it; it has
     * no timing of its own (docs/cli.md#json example). */
    fputs(", \"object\": ", out);
    st__json_string(out, ev->object);
    fputs(", \"phase\": ", out);
    st__json_string(out, ev->phase);
    fputc('}', out);
    return;
  }
  fputs(", \"round\": ", out);
  if (ev->round < 0)
    fputs("null", out);
  else
    fprintf(out, "%d", ev->round);
  fprintf(out,
          ", \"start_ns\": %" PRIu64 ", \"dur_ns\": %" PRIu64 ", \"status\": ",
          ev->start_ns, ev->dur_ns);
  st__json_string(out, st_phase_status_name(ev->status));
  fputs(", \"loaded\": ", out);
  st__json_string_array(out, ev->loaded, ev->n_loaded);
  if (strcmp(ev->name, "record") == 0)
    fprintf(out, ", \"emitted\": %s", ev->emitted ? "true" : "false");
  /* A platform's own timing of the kernel
   * (docs/plugins.md#device-time-device_ns-and-copy_ns): only when it reported
   * one. */
  if (strcmp(ev->name, "run") == 0 && ev->device_ns != ST_NS_NONE)
    fprintf(out, ", \"device_ns\": %" PRIu64, ev->device_ns);
  if (strcmp(ev->name, "run") == 0 && ev->copy_ns != ST_NS_NONE)
    fprintf(out, ", \"copy_ns\": %" PRIu64, ev->copy_ns);
  fputc('}', out);
}

/* "env": the case's variables (docs/scene-format.md), {} without any. */
static void write_env(FILE *out, const st_case_result *res) {
  const char *name, *value;
  size_t n = st__case_result_env(res, 0, &name, &value);
  fputs(", \"env\": {", out);
  for (size_t i = 0; i < n; i++) {
    st__case_result_env(res, i, &name, &value);
    if (i > 0)
      fputs(", ", out);
    st__json_string(out, name);
    fputs(": ", out);
    st__json_string(out, value);
  }
  fputc('}', out);
}

/* "tags": the case's (docs/scene-format.md#tags), [] without any. */
static void write_tags(FILE *out, const st_case_result *res) {
  const char *name = NULL;
  size_t n = st__case_result_tag(res, 0, &name);
  fputs(", \"tags\": [", out);
  for (size_t i = 0; i < n; i++) {
    st__case_result_tag(res, i, &name);
    if (i > 0)
      fputs(", ", out);
    st__json_string(out, name);
  }
  fputc(']', out);
}

void st__report_case_object(FILE *out, const st_case_result *res,
                            const char *id) {
  size_t i, n;

  fputc('{', out);
  if (id != NULL) {
    /* The reported name (with @k under --repeat) and the iteration: the
     * JSON document's additions to the --events object (docs/cli.md#json). */
    fputs("\"id\": ", out);
    st__json_string(out, id);
    fprintf(out, ", \"iteration\": %u, ", st_case_result_iteration(res));
  }
  fputs("\"scene\": ", out);
  st__json_string(out, st_case_result_scene(res));
  fputs(", \"case\": ", out);
  st__json_string(out, st_case_result_case(res));
  fputs(", \"platform\": ", out);
  st__json_string(out, st_case_result_platform(res));
  fputs(", \"status\": ", out);
  st__json_string(out, st_case_status_name(st_case_result_status(res)));
  fputs(", \"message\": ", out);
  st__json_string(out, st_case_result_message(res));
  /* What an isolated child or a level-3 worker printed (null when
   * nothing was captured). */
  fputs(", \"output\": ", out);
  st__json_string(out, st_case_result_output(res));
  fprintf(out,
          ", \"pid\": %ld, \"duration_ns\": %" PRIu64 ", \"record_stale\": %s",
          st_case_result_pid(res), st_case_result_duration_ns(res),
          st_case_result_record_stale(res) ? "true" : "false");
  write_env(out, res);
  write_tags(out, res);
  st__report_trust_json(out, res);
  fputs(", \"events\": [", out);
  n = st_case_result_event_count(res);
  for (i = 0; i < n; i++) {
    if (i > 0)
      fputs(", ", out);
    write_event(out, st_case_result_event(res, i));
  }
  fputs("]}", out);
}

void st__report_events_write(FILE *out, const st_case_result *res) {
  st__report_case_object(out, res, NULL);
  fputc('\n', out);
}

static void events_case_end(void *data, const st_case_info *info,
                            const st_case_result *result) {
  events_state *st = data;
  (void)info;
  st__report_events_write(st->out, result);
  fflush(st->out);
}

st_status st__report_events_new(const st__report_config *cfg,
                                st_observer *obs) {
  events_state *st = st__report_state_new(obs, sizeof *st);

  if (st == NULL)
    return ST_ENOMEM;
  st->out = cfg->out;
  obs->case_finish = events_case_end;
  return ST_OK;
}

void st__report_events_free(st_observer *obs) { st__report_state_free(obs); }
