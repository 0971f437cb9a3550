/* SPDX-License-Identifier: MIT */
/* The JSON reporter (--format json, docs/cli.md#json): one document written
 * when the run ends,
 *
 *   {"format_version": 1, "version", "run": {argv, platform,
 *    golden_platform, seed, shard: {index, total, source} | null, repeat,
 *    shuffle_seed | null, start, host}, "autoload": [distinct records],
 *    "summary": {pass, fail, error, skip, xfail, xpass}, "cases": [...]}
 *
 * where each case is the --events object plus "id" and "iteration". The
 * shape is pinned by docs/report.schema.json (JSON Schema 2020-12), which
 * the tests validate every document against. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case/fingerprint.h"
#include "report/autoload.h"
#include "report/json.h"
#include "report/report.h"

/* One document at run end: the shared reporter state (report.h). */
typedef st__report_doc json_state;

static void put_run(FILE *out, const json_state *st) {
  char host[256];
  int i;

  if (gethostname(host, sizeof host) != 0)
    snprintf(host, sizeof host, "localhost");
  host[sizeof host - 1] = '\0';
  fputs("  \"run\": {\"argv\": [", out);
  for (i = 0; i < st->cfg.argc; i++) {
    if (i > 0)
      fputs(", ", out);
    st__json_string(out, st->cfg.argv[i]);
  }
  fputs("], \"platform\": ", out);
  st__json_string(out, st->info.platform);
  fputs(", \"golden_platform\": ", out);
  st__json_string(out, st->cfg.golden_platform != NULL ? st->cfg.golden_platform
                                                       : "reference");
  fprintf(out, ", \"seed\": %" PRIu64 ", \"shard\": ", st->info.seed);
  if (st->info.shard_total > 1) {
    fprintf(out,
            "{\"index\": %u, \"total\": %u, \"source\": ", st->info.shard_index,
            st->info.shard_total);
    st__json_string(out, st->cfg.shard_source != NULL ? st->cfg.shard_source
                                                      : "--shard");
    fputc('}', out);
  } else {
    fputs("null", out);
  }
  fprintf(out, ", \"repeat\": %u, \"shuffle_seed\": ",
          st->info.repeat ? st->info.repeat : 1);
  if (st->info.shuffle)
    fprintf(out, "%" PRIu64, st->info.shuffle_seed);
  else
    fputs("null", out);
  fprintf(out, ", \"start\": \"%s\", \"host\": ", st->start);
  st__json_string(out, host);
  fputs("},\n", out);
}

static void put_record(FILE *out, const st__record *r) {
  char module[256];
  size_t i;
  int first = 1;

  fprintf(out, "{\"pid\": %ld", r->pid);
  for (i = 0; i < r->n; i++) {
    if (st__record_module(r->fields[i].key, module, sizeof module) != NULL)
      continue;
    fputs(", ", out);
    st__json_string(out, r->fields[i].key);
    fputs(": ", out);
    /* raw stays the record's escaped ASCII text, quotes included, so
     * that unset ("-") and the value "-" ("\"-\"") stay apart. */
    st__json_string(out, r->fields[i].value);
  }
  fputs(", \"modules\": {", out);
  for (i = 0; i < r->n; i++) {
    if (st__record_module(r->fields[i].key, module, sizeof module) == NULL)
      continue;
    if (!first)
      fputs(", ", out);
    first = 0;
    st__json_string(out, module);
    fprintf(out, ": %s",
            strcmp(r->fields[i].value, "true") == 0 ? "true" : "false");
  }
  fputs("}}", out);
}

static void json_run_end(void *data, const st_run_result *run) {
  json_state *st = data;
  FILE *out = st->cfg.out;
  st__record *recs = NULL;
  size_t n_recs = 0, i, n = st_run_result_count(run);

  if (st__records_distinct(run, &recs, &n_recs) != ST_OK)
    n_recs = 0; /* out of memory: the report goes on without them */
  fputs("{\"format_version\": 1, \"version\": \"" ST_VERSION_STRING "\",\n",
        out);
  put_run(out, st);
  if (st->cfg.merge_inputs != NULL)
    fprintf(out, "  \"inputs\": %s,\n", st->cfg.merge_inputs);
  if (st->cfg.durations > 0) {
    fputs("  ", out);
    st__durations_json(out, run, st->cfg.durations);
    fputs(",\n", out);
  }
  fputs("  \"autoload\": [", out);
  for (i = 0; i < n_recs; i++) {
    if (i > 0)
      fputs(", ", out);
    put_record(out, &recs[i]);
  }
  {
    /* docs/bench.md#the-environment-fingerprint: this process's (the
     * host's keys; a platform's own are in the log's fingerprint lines). */
    st__fingerprint fp;
    st__fingerprint_collect(NULL, NULL, &fp);
    fputs("],\n  \"fingerprint\": {", out);
    for (i = 0; i < fp.n; i++) {
      fputs(i > 0 ? ", " : "", out);
      st__json_string(out, fp.key[i]);
      fputs(": ", out);
      st__json_string(out, fp.value[i]);
    }
    fputs("}", out);
  }
  fprintf(out,
          ",\n  \"summary\": {\"pass\": %zu, \"fail\": %zu, \"error\": %zu, "
          "\"skip\": %zu, \"xfail\": %zu, \"xpass\": %zu},\n  \"cases\": [",
          st_run_result_count_status(run, ST_CASE_PASS),
          st_run_result_count_status(run, ST_CASE_FAIL),
          st_run_result_count_status(run, ST_CASE_ERROR),
          st_run_result_count_status(run, ST_CASE_SKIP),
          st_run_result_count_status(run, ST_CASE_XFAIL),
          st_run_result_count_status(run, ST_CASE_XPASS));
  for (i = 0; i < n; i++) {
    const st_case_result *r = st_run_result_get(run, i);
    char *id;
    if (r == NULL)
      continue;
    id = st__report_case_id(st_case_result_scene(r), st_case_result_case(r),
                            st_case_result_iteration(r), st->info.repeat, 0);
    fputs(i > 0 ? ",\n    " : "\n    ", out);
    st__report_case_object(out, r, id != NULL ? id : "");
    free(id);
  }
  fputs(n > 0 ? "\n  ]}\n" : "]}\n", out);
  fflush(out);
  st__records_free(recs, n_recs);
}

st_status st__report_json_new(const st__report_config *cfg, st_observer *obs) {
  return st__report_doc_new(cfg, json_run_end, obs);
}

void st__report_json_free(st_observer *obs) { st__report_doc_free(obs); }
