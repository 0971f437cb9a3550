/* SPDX-License-Identifier: MIT */
/* The CLI's reporters: observers of a run (st_observer of run.h) that write
 * the text summary, TAP, or the events JSON Lines to a stream, plus what
 * they share (the rerun command). CLI-private. */
#ifndef SCENETEST_HARNESS_REPORT_H
#define SCENETEST_HARNESS_REPORT_H

#include <stdio.h>

#include <scenetest/run.h>
#include <scenetest/scene.h>

/* What every reporter is built from. Borrowed for the reporter's life. */
typedef struct st__report_config {
  FILE *out;              /* the report stream (the original stdout) */
  int tty;                /* text: out is a terminal; redraw progress */
  int color;              /* text: use ANSI colours (on a terminal; 2:
                             anywhere, --color always) */
  int verbosity;          /* text: -1 -q (failures and the summary), 0,
                             1 -v (a passing case's output and phases) */
  const char *rerun_opts; /* options the rerun command repeats after
                             "--platform P" (" --rounds 3"), or NULL */
  const char *argv0;      /* the program as invoked, for the rerun
                             command; NULL: "scenetest" */
  /* Run metadata for the JSON and JUnit reports (docs/cli.md#json). */
  int argc;
  char *const *argv;
  const char *golden_platform; /* NULL: "reference" */
  const char *shard_source;    /* what set the shard ("--shard",
                                  "GTEST_SHARD_INDEX", ...); NULL: none */
  int junit_xunit1;            /* --junit-family xunit1: file, line */
  /* The loaded scenes: JUnit's golden_platform property of a scene
   * without --golden-platform is the scene's own. NULL: "reference". */
  const st_scene_set *scenes;
  /* `scenetest merge` (docs/cli.md#merge): the JSON report's "inputs"
   * list, rendered (a JSON array). NULL: none, as for `run`. */
  const char *merge_inputs;
  /* merge: the text summary's "in T", the sum of the merged cases'
   * durations; 0: the run's own wall time. */
  uint64_t merge_elapsed_ns;
  unsigned durations; /* --durations N: the N slowest cases; 0 none */
} st__report_config;

/* Each constructor fills *obs with callbacks and a malloc'd state in
 * obs->data; the matching *_free releases it (accepts an observer whose
 * data is NULL). ST_ENOMEM when the state cannot be allocated.
 * Thread-safety: one thread per observer (the run calls them one at a
 * time). */

/* What every constructor starts with: *obs reset (st_observer_init) and
 * a zeroed state of size bytes as obs->data, which is also returned; NULL
 * (obs->data NULL) when out of memory. */
void *st__report_state_new(st_observer *obs /* OUT */, size_t size);
/* Frees obs->data as one block and clears it: the *_free of every
 * reporter whose state owns nothing else. Accepts NULL and a freed
 * observer. */
void st__report_state_free(st_observer *obs /* IN/OUT, may be NULL */);

st_status st__report_text_new(const st__report_config *cfg /* IN */,
                              st_observer *obs /* OUT */) ST_WUR;
void st__report_text_free(st_observer *obs /* IN/OUT */);

/* TAP 13 as docs/cli.md#tap: header and plan at run begin, one point per case
 * in finish order, a YAML block after a failing point. */
st_status st__report_tap_new(const st__report_config *cfg /* IN */,
                             st_observer *obs /* OUT */) ST_WUR;
void st__report_tap_free(st_observer *obs /* IN/OUT */);
/* A complete TAP stream for a run that selected nothing:
 * "1..0 # SKIP reason", which prove and meson read as a skipped test. */
void st__report_tap_empty(FILE *out /* IN */, const char *reason /* IN */);

/* JSON Lines: one object per case in finish order (docs/cli.md#--events-file
 * --events). Only cfg->out is used. */
st_status st__report_events_new(const st__report_config *cfg /* IN */,
                                st_observer *obs /* OUT */) ST_WUR;
void st__report_events_free(st_observer *obs /* IN/OUT */);
/* Writes one case's object and a newline. For the events reporter and
 * tests. Thread-safety: one thread per out. */
void st__report_events_write(FILE *out /* IN */,
                             const st_case_result *res /* IN */);

/* JUnit XML (docs/cli.md#junit): the whole document at run end, one <testsuite>
 * per scene with the run's properties first. Valid against the xUnit
 * plugin's junit-10.xsd unless cfg->junit_xunit1 (which adds file and
 * line to each testcase, as GitLab reads them). */
st_status st__report_junit_new(const st__report_config *cfg /* IN */,
                               st_observer *obs /* OUT */) ST_WUR;
void st__report_junit_free(st_observer *obs /* IN/OUT */);

/* The JSON document of docs/cli.md#json, written at run end. */
st_status st__report_json_new(const st__report_config *cfg /* IN */,
                              st_observer *obs /* OUT */) ST_WUR;
void st__report_json_free(st_observer *obs /* IN/OUT */);
/* Writes one case's JSON object (the --events fields; with id != NULL
 * also "id" and "iteration"), no newline. Thread-safety: one thread per
 * out. */
void st__report_case_object(FILE *out /* IN */,
                            const st_case_result *res /* IN */,
                            const char *id /* IN, may be NULL */);

/* The name a report gives a case: "SCENE::CASE", or "SCENE::CASE@k" for
 * iteration k when the run repeats (repeat > 1; docs/cli.md#tap: '#' would end
 * a TAP description). With kase_only, "CASE" or "CASE@k" (JUnit's name).
 * malloc'd (the caller frees), NULL when out of memory. */
char *st__report_case_id(const char *scene /* IN */, const char *kase /* IN */,
                         unsigned iteration, unsigned repeat, int kase_only);
/* Writes the shard and shuffle header lines that every report shows
 * (docs/cli.md#tap) after prefix ("# " for TAP, "" for text), each line
 * "PREFIXshard K/N" / "PREFIXshuffle seed S"; nothing when neither.
 * Thread-safety: one thread per out. */
void st__report_run_header(FILE *out /* IN */, const char *prefix /* IN */,
                           const st_run_info *info /* IN */);
/* --durations (report/durations.c): "PREFIXslowest N cases:" and a line
 * a case, "PREFIX  SECONDSs  ID  (slowest phase: NAME SECONDSs)", the
 * slowest first; nothing when limit is 0. And the JSON member
 * "slowest": [{"id", "duration_ns", "phase", "phase_ns"}, ...].
 * Thread-safety: one thread per out. */
void st__durations_text(FILE *out /* IN */, const st_run_result *run /* IN */,
                        unsigned limit, const char *prefix /* IN */);
void st__durations_json(FILE *out /* IN */, const st_run_result *run /* IN */,
                        unsigned limit);
/* UTC now as ISO 8601 ("2026-05-01T12:00:00Z") into buf. */
void st__report_utc_now(char *buf /* OUT */, size_t size);

/* What a reporter that writes one document at run end (JUnit, JSON, HTML)
 * keeps: its config, the run's info and its start time. */
typedef struct st__report_doc {
  st__report_config cfg;
  st_run_info info;
  char start[32]; /* UTC, ISO 8601 */
} st__report_doc;
/* Fills *obs with a malloc'd st__report_doc as its data, a run_begin that
 * records the info and start time, and run_end (which writes the
 * document); free with st__report_doc_free. ST_ENOMEM when the state
 * cannot be allocated. Thread-safety: one thread per observer. */
st_status st__report_doc_new(const st__report_config *cfg /* IN */,
                             void (*run_end)(void *, const st_run_result *),
                             st_observer *obs /* OUT */) ST_WUR;
void st__report_doc_free(st_observer *obs /* IN/OUT */);

/* One self-contained HTML page at run end (docs/reports.md): metadata
 * (cfg->argv shown as the command), the autoload records, summary,
 * failures first, every case in a sortable table, phase timelines. */
st_status st__report_html_new(const st__report_config *cfg /* IN */,
                              st_observer *obs /* OUT */) ST_WUR;
void st__report_html_free(st_observer *obs /* IN/OUT */);

/* The report formats, one table (report/formats.c; docs/cli.md#output),
 * indexed by the format ids that --format and --report give. */
typedef struct st__report_format {
  const char *name; /* as --format and --report spell it */
  st_status (*make)(const st__report_config *cfg, st_observer *obs);
  void (*free)(st_observer *obs);
  int whole_document; /* the whole document at run end, from the cases'
                         kept records (the run keeps them) */
  int list;           /* `list --format` takes it */
  int report;         /* --report FORMAT:PATH takes it */
  int log_failures;   /* as the --format report, each case that did not
                         pass is also logged on stderr (the TAP reader
                         keeps the YAML diagnostics out of its console) */
  const char *gtest;  /* GTEST_OUTPUT's kind and the file extension it
                         implies; NULL: GTEST_OUTPUT cannot ask for it */
  /* A run that selected nothing, with reason ("no cases selected"):
   * writes the complete report; NULL: the reporter observes an empty
   * run (run_begin, run_end). */
  void (*empty)(FILE *out, const char *reason);
} st__report_format;
extern const st__report_format st__report_formats[];
extern const size_t st__n_report_formats;
/* The id of the format named name; -1 for an unknown name. Thread-safety:
 * any thread. */
int st__report_format_find(const char *name /* IN */);
/* The name of format id fmt, "?" for none. */
const char *st__report_format_name(int fmt);
/* Which formats st__report_format_names joins. */
enum { ST__FMT_ALL, ST__FMT_LIST, ST__FMT_REPORT };
/* The names of the formats `which` selects, in table order, joined by sep
 * and, before the last, by last ("tap, junit, json or html"), into buf;
 * returns buf. Thread-safety: any thread. */
char *st__report_format_names(char *buf /* OUT */, size_t size, int which,
                              const char *sep /* IN */,
                              const char *last /* IN */);

/* Writes s quoted for a POSIX shell: as is when every byte is in
 * [A-Za-z0-9_./:=@%+,-] (and s is not empty), else in single quotes with
 * each ' written as '\''. Thread-safety: one thread per out. */
void st__shell_quote(FILE *out /* IN */, const char *s /* IN */);
/* Writes the command that reruns just this case:
 * scenetest run --case 'S::C' --seed N --platform P [rerun_opts] FILE */
void st__report_rerun(FILE *out /* IN */, const st__report_config *cfg /* IN */,
                      const char *scene /* IN */, const char *kase /* IN */,
                      uint64_t seed, const char *platform /* IN */,
                      const char *file /* IN */);

#endif
