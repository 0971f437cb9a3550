/* SPDX-License-Identifier: MIT */
/* Embedding scenetest without its CLI, through the public API only: load
 * a scene from a string, run it with an observer that prints every phase
 * as it ends, then walk each case result's events (phases, rounds, loaded
 * objects, the record's emission) and exit non-zero unless every case
 * passed. docs/api.md walks through this file. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <scenetest/scenetest.h>

static const char scene_yaml[] =
    "scene: embed_add\n"
    "kernel: add\n"
    "args:\n"
    "  - {tensor: a,   dtype: float32, shape: [N], init: {uniform: [-1, 1]}}\n"
    "  - {tensor: b,   dtype: float32, shape: [N], init: {fill: 3.0}}\n"
    "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
    "cases:\n"
    "  - name: small\n"
    "    params: {N: 1024}\n"
    "  - name: two_rounds\n"
    "    params: {N: 64}\n"
    "    rounds: 2\n";

/* The observer's state: how many phase calls it saw. Callbacks come from
 * the thread that called st_run, one at a time, so no lock is needed. */
typedef struct printer {
  size_t phases;
} printer;

static void on_case_begin(void *data, const st_case_info *info) {
  (void)data;
  printf("[%zu/%zu] %s::%s on %s\n", info->index + 1, info->total, info->scene,
         info->name, info->platform);
}

static void on_phase_end(void *data, const st_case_info *info,
                         const st_event *ev) {
  printer *p = data;
  char round[24] = "";
  (void)info;
  p->phases++;
  if (ev->round >= 0)
    snprintf(round, sizeof round, "round %d", ev->round);
  printf("  %-8s %-9s %-5s %" PRIu64 " ns\n", ev->name, round,
         st_phase_status_name(ev->status), ev->dur_ns);
}

static void on_case_end(void *data, const st_case_info *info,
                        const st_case_result *res) {
  const char *msg = st_case_result_message(res);
  (void)data;
  printf("  => %s::%s %s%s%s\n", info->scene, info->name,
         st_case_status_name(st_case_result_status(res)), msg ? ": " : "",
         msg ? msg : "");
}

/* After the run: the events are kept in the result, deep-copied, so they
 * can be inspected after st_run returned. */
static int inspect(const st_case_result *res) {
  size_t i, n = st_case_result_event_count(res), runs = 0;
  long record = -1, first_run = -1;
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(res, i);
    size_t k;
    if (strcmp(ev->name, "load") == 0) {
      printf("  load %s (during %s)\n", ev->object, ev->phase);
      continue;
    }
    for (k = 0; k < ev->n_loaded; k++)
      printf("  %s loaded %s\n", ev->name, ev->loaded[k]);
    if (strcmp(ev->name, "record") == 0) {
      record = (long)i;
      printf("  record emitted=%s\n", ev->emitted ? "true" : "false");
    }
    if (strcmp(ev->name, "run") == 0) {
      if (first_run < 0)
        first_run = (long)i;
      runs++;
    }
  }
  printf("%s::%s: %zu events, %zu run phase(s), %" PRIu64 " ns, pid %ld%s\n",
         st_case_result_scene(res), st_case_result_case(res), n, runs,
         st_case_result_duration_ns(res), st_case_result_pid(res),
         st_case_result_record_stale(res) ? ", record stale" : "");
  /* docs/measuring.md#the-staleness-check: record comes before the first run.
   */
  if (record < 0 || (first_run >= 0 && record > first_run)) {
    fprintf(stderr, "embed: %s::%s: record is not before the first run\n",
            st_case_result_scene(res), st_case_result_case(res));
    return 1;
  }
  return 0;
}

int main(void) {
  st_scene_set *set = NULL;
  st_error_list errors;
  st_run_options opts;
  st_run_result *result = NULL;
  st_error err;
  printer p = {0};
  st_observer obs;
  char line[ST_ERROR_FILE_MAX + ST_ERROR_MESSAGE_MAX + 32];
  int rc = 1;
  size_t i;

  st_error_list_init(&errors);
  st_error_clear(&err);
  /* The record and the per-phase TIMING lines go to stderr; this program
   * prints its own, so keep only warnings and errors. */
  st_log_set_level(ST_LOG_WARNING);

  if (st_scene_set_new(&set) != ST_OK) {
    fprintf(stderr, "embed: out of memory\n");
    goto out;
  }
  if (st_scene_set_load_string(set, "embed.yaml", scene_yaml,
                               strlen(scene_yaml), NULL, &errors) != ST_OK) {
    for (i = 0; i < errors.count; i++)
      fprintf(stderr, "%s\n",
              st_error_format(&errors.items[i], line, sizeof line));
    rc = 2;
    goto out;
  }
  for (i = 0; i < st_scene_set_count(set); i++) {
    const st_scene *sc = st_scene_set_get(set, i);
    size_t c;
    for (c = 0; c < st_scene_case_count(sc); c++)
      printf("loaded %s::%s (%s:%d)\n", st_scene_name(sc),
             st_scene_case_name(sc, c), st_scene_file(sc),
             st_scene_case_line(sc, c));
  }

  st_run_options_init(&opts);
  opts.platform = "threads";
  opts.seed = 7;

  st_observer_init(&obs);
  obs.data = &p;
  obs.case_begin = on_case_begin;
  obs.phase_end = on_phase_end;
  obs.case_end = on_case_end;

  if (st_run(set, &opts, &obs, 1, &result, &err) != ST_OK) {
    fprintf(stderr, "embed: %s\n", st_error_format(&err, line, sizeof line));
    rc = 2;
    goto out;
  }
  rc = st_run_result_exit_code(result);
  for (i = 0; i < st_run_result_count(result); i++)
    if (inspect(st_run_result_get(result, i)) != 0)
      rc = 1;
  printf("%zu passed, %zu failed, %zu errors, %zu skipped; %zu phase calls\n",
         st_run_result_count_status(result, ST_CASE_PASS),
         st_run_result_count_status(result, ST_CASE_FAIL),
         st_run_result_count_status(result, ST_CASE_ERROR),
         st_run_result_count_status(result, ST_CASE_SKIP), p.phases);
  if (p.phases == 0)
    rc = 1;

out:
  st_run_result_free(result);
  st_scene_set_free(set);
  st_error_list_free(&errors);
  return rc;
}
